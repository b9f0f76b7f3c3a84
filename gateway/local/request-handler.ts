/** The proxy's request path, in Kong 3.9.1's order. */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { LoadedGateway } from './config/load';
import type { Logger } from './logger';
import { continueIfExpected, nginxRefusal } from './nginx';
import type { Exit } from './plugins/definition';
import { headerMap } from './nginx';
import { RequestContext } from './request-context';
import { normalizePath, type Router } from './router';
import type { PluginInstance } from './types';
import type { GATEWAY_HEADERS, HeaderValues } from '../../service/headers';
import { proxy, type Upstreams } from './upstream/proxy';

export type Serving = LoadedGateway & { router: Router };
export type HandlerDeps = { current(): Serving; upstreams: Upstreams; listenPort(): number; logger: Logger };

/** $remote_addr: an IPv4 client on a dual-stack socket without ::ffff:, as nginx shows it. */
export const clientAddress = (remote = ''): string =>
  remote.startsWith('::ffff:') && remote.includes('.') ? remote.slice(7) : remote;

/** $kong_request_id: 16 random bytes as 32 hex characters. */
export const newRequestId = (): string => randomBytes(16).toString('hex');

/** Kong's header_filter: the plugins', then X-Kong-Request-Id, X-Request-ID (nginx-proxy-jobs.conf) and an explicit Connection (nginx never sends the Keep-Alive header Node would add). */
export function filterHeaders(
  ctx: RequestContext,
  plugins: readonly PluginInstance[],
  headers: Array<[string, string]>,
  close: boolean,
): string[] {
  for (const plugin of plugins) plugin.definition.headerFilter?.(ctx, plugin.config);
  const ids: HeaderValues<typeof GATEWAY_HEADERS> = {
    'X-Kong-Request-Id': ctx.requestId,
    'X-Request-ID': ctx.correlationId,
  };
  const added: Array<[string, string]> = [
    ...ctx.responseHeaders,
    ...Object.entries(ids),
    ['Connection', close ? 'close' : 'keep-alive'],
  ];
  const replaced = new Set(added.map(([name]) => name.toLowerCase()));
  return [...headers.filter(([name]) => !replaced.has(name.toLowerCase())), ...added].flat();
}

function splitTarget(url: string): { path: string; query: string | null } {
  const target = url.startsWith('/') ? url : URL.canParse(url) ? new URL(url).pathname + new URL(url).search : '/';
  const q = target.indexOf('?');
  return q === -1 ? { path: target, query: null } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

export function createRequestHandler(deps: HandlerDeps): http.RequestListener {
  return (req, res) => {
    const started = Date.now();
    const requestId = newRequestId();
    const { config, router, hosts } = deps.current();
    const method = req.method ?? 'GET';
    const target = splitTarget(req.url ?? '/');
    const path = normalizePath(target.path);
    const clientHeaders = headerMap(req.rawHeaders);
    const refusal = nginxRefusal(req, clientHeaders);
    const route = refusal === null ? router.match(method, path) : null;
    const ctx = new RequestContext({
      req,
      res,
      method,
      path,
      rawPath: target.path,
      args: target.query,
      requestId,
      config,
      route,
      clientIp: clientAddress(req.socket.remoteAddress),
      clientHeaders,
    });
    const plugins: readonly PluginInstance[] = route ? route.plugins : config.globalPlugins;

    res.once('close', () => {
      ctx.status = res.statusCode;
      for (const plugin of plugins) plugin.definition.log?.(ctx, plugin.config, plugin);
      // The path only: a query string may carry a key.
      const line = {
        method,
        path,
        status: res.statusCode,
        route: route?.name ?? null,
        consumer: ctx.consumer?.username ?? null,
        request_id: requestId,
        ms: Date.now() - started,
      };
      deps.logger.info(line, 'request');
    });

    const sendExit = (exit: Exit): void => {
      if (req.socket.destroyed || res.writableEnded) return;
      if (res.headersSent) return void res.destroy();
      const headers = filterHeaders(
        ctx,
        plugins,
        Object.entries(exit.headers),
        exit.close === true || !res.shouldKeepAlive,
      );
      res.writeHead(exit.status, [...headers, 'Content-Length', String(Buffer.byteLength(exit.body))]);
      res.end(method === 'HEAD' ? undefined : exit.body);
    };

    if (refusal !== null) return sendExit(ctx.refusal(refusal));
    continueIfExpected(clientHeaders, res);
    if (!route) {
      ctx.source = 'exit';
      return sendExit(ctx.error(404, 'no Route matched with those values'));
    }

    void (async () => {
      for (const plugin of route.plugins) {
        let exit = plugin.definition.access(ctx, plugin.config, plugin);
        if (exit instanceof Promise) exit = await exit;
        if (exit) {
          ctx.source = exit.close ? 'error' : 'exit';
          return sendExit(exit);
        }
      }
      const read = await ctx.readBody();
      if ('tooLarge' in read) {
        ctx.source = 'error';
        return sendExit(ctx.refusal(413));
      }
      ctx.source = 'service';
      await proxy(ctx, res, {
        upstreams: deps.upstreams,
        hosts,
        listenPort: deps.listenPort(),
        body: read.body,
        headerFilter: (headers) => filterHeaders(ctx, plugins, headers, !res.shouldKeepAlive),
        fail: (status, message) => {
          ctx.source = 'error';
          sendExit(ctx.error(status, message));
        },
      });
    })().catch((err: unknown) => {
      deps.logger.error({ err, request_id: requestId }, 'unexpected error');
      ctx.source = 'error';
      sendExit(ctx.error(500, 'An unexpected error occurred'));
    });
  };
}

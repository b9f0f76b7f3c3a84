/**
 * The proxy's request path, in the order of Kong 3.9.1 on nginx:
 * 1. nginx's own refusals (nginx/request-checks.ts: TRACE, CONNECT, bad framing, too large),
 *    answered by Kong's error handler;
 * 2. the router (kong/runloop/handler.lua access.before): no match is Kong's 404;
 * 3. the route's plugins' access phase by descending priority; the first that answers ends it,
 *    but every plugin of the route is "collected" for the later phases
 *    (kong/init.lua execute_collecting_plugins_iterator);
 * 4. the body is read whole (proxy_request_buffering on) and the request proxied;
 * 5. header_filter on whatever answers (header-filter.ts), then the log phase of the collected
 *    plugins (or of the global ones when nothing was routed) once the response is sent.
 */
import { randomFillSync } from 'node:crypto';
import type http from 'node:http';
import type { LoadedGateway } from './config/load';
import { headerFilter, type HeaderPairs, type Timing } from './header-filter';
import type { KongHeaders } from './kong-headers';
import type { Logger } from './logger';
import type { NginxLimits } from './nginx/limits';
import { closeWhenBodyStalls } from './nginx/body-timeout';
import { nginxRefusal } from './nginx/request-checks';
import { specialResponse } from './nginx/special-response';
import type { Exit } from './plugins/definition';
import { headerMap, RequestContext } from './request-context';
import { normalizePath } from './router';
import type { PluginInstance } from './types';
import type { GzipSettings } from './upstream/compress';
import { proxy, type Upstreams } from './upstream/proxy';

export interface HandlerDeps {
  current(): LoadedGateway;
  upstreams: Upstreams;
  listenPort(): number;
  logger: Logger;
  kongHeaders: KongHeaders;
  limits: NginxLimits;
  gzip: GzipSettings;
}

/** $remote_addr: an IPv4 client on a dual-stack socket is shown as nginx shows it, without ::ffff:. */
export function clientAddress(remote: string | undefined): string {
  const address = remote ?? '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

// Random bytes drawn 4 KiB at a time: one randomFillSync per 256 ids instead of one per request.
const ids = Buffer.alloc(4096);
let idOffset = ids.length;

/** Kong's request id ($kong_request_id, nginx's $request_id: 16 random bytes as 32 hex characters). */
export function newRequestId(): string {
  if (idOffset === ids.length) {
    randomFillSync(ids);
    idOffset = 0;
  }
  idOffset += 16;
  return ids.toString('hex', idOffset - 16, idOffset);
}

function splitTarget(url: string): { path: string; query: string | null } {
  let target = url;
  if (!target.startsWith('/')) {
    try {
      const parsed = new URL(target);
      target = parsed.pathname + parsed.search;
    } catch {
      target = '/';
    }
  }
  const q = target.indexOf('?');
  return q === -1 ? { path: target, query: null } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

export function createHandler(deps: HandlerDeps): http.RequestListener {
  return (req, res) => {
    const timing: Timing = { started: Date.now() };
    const requestId = newRequestId();
    const { config, router, hosts } = deps.current();
    const method = req.method ?? 'GET';
    const target = splitTarget(req.url ?? '/');
    const path = normalizePath(target.path);
    const clientHeaders = headerMap(req.rawHeaders);
    const refusal = nginxRefusal(req, clientHeaders, deps.limits);
    const route = refusal === null ? router.match(method, path) : null;
    const ctx = new RequestContext(req, res, deps.limits.maxBodyBytes, method, path, target.path, target.query, requestId, config, route, clientAddress(req.socket.remoteAddress), clientHeaders);
    // Collected plugins: the route's, all of them; the global ones when nothing was routed.
    const plugins: readonly PluginInstance[] = route ? route.plugins : config.globalPlugins;

    res.once('close', () => {
      ctx.status = res.statusCode;
      for (const plugin of plugins) plugin.definition.log?.(ctx, plugin.config, plugin);
      // The path only: a query string may carry a key.
      deps.logger.info(
        {
          method,
          path,
          status: res.statusCode,
          route: route?.name ?? null,
          consumer: ctx.consumer?.username ?? null,
          request_id: requestId,
          ms: Date.now() - timing.started,
        },
        'request',
      );
    });

    const filter = (headers: HeaderPairs, proxied: boolean, close: boolean): string[] =>
      headerFilter({ ctx, plugins, kongHeaders: deps.kongHeaders, headers, proxied, timing, close: close || !res.shouldKeepAlive });

    const sendExit = (exit: Exit): void => {
      if (req.socket.destroyed || res.writableEnded) return;
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const headers = filter(Object.entries(exit.headers), false, exit.close === true);
      headers.push('Content-Length', String(Buffer.byteLength(exit.body)));
      res.writeHead(exit.status, headers);
      res.end(method === 'HEAD' ? undefined : exit.body);
    };

    if (refusal !== null) {
      sendExit(specialResponse(config.errorTemplate, refusal, requestId));
      return;
    }
    if (!route) {
      ctx.source = 'exit';
      sendExit(ctx.error(404, 'no Route matched with those values'));
      return;
    }

    void (async () => {
      for (const plugin of route.plugins) {
        // Most access handlers answer synchronously; awaiting only promises saves a turn each.
        let exit = plugin.definition.access(ctx, plugin.config, plugin);
        if (exit instanceof Promise) exit = await exit;
        if (exit) {
          ctx.source = exit.close ? 'error' : 'exit';
          sendExit(exit);
          return;
        }
      }
      const stalled = closeWhenBodyStalls(req, deps.limits.bodyTimeoutMs);
      const read = await ctx.readBody().finally(stalled);
      if ('tooLarge' in read) {
        ctx.source = 'error';
        sendExit(specialResponse(config.errorTemplate, 413, requestId));
        return;
      }
      ctx.source = 'service';
      timing.upstreamStart = Date.now();
      await proxy(ctx, res, {
        upstreams: deps.upstreams,
        hosts,
        listenPort: deps.listenPort(),
        kongHeaders: deps.kongHeaders,
        body: read.body,
        gzip: deps.gzip,
        headerFilter: (headers) => {
          timing.upstreamHeaders = Date.now();
          return filter(headers, true, false);
        },
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

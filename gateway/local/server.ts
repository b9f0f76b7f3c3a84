/**
 * The proxy's request path, in Kong's order: route the request (404 when nothing matches), run
 * the route's plugins' access phase by descending priority (the first that answers ends it), then
 * proxy. Every response, proxied or not, goes through the header filter of the plugins that ran.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { LoadedGateway } from './config/load';
import { renderError } from './error-template';
import type { Logger } from './logger';
import type { Exit } from './plugins/definition';
import { RequestContext } from './request-context';
import { normalizePath } from './router';
import type { PluginInstance } from './types';
import { proxy } from './upstream/proxy';

export interface HandlerDeps {
  current(): LoadedGateway;
  agent: http.Agent;
  listenPort(): number;
  logger: Logger;
}

function send(req: http.IncomingMessage, res: http.ServerResponse, exit: Exit, extra: Map<string, string>): void {
  const headers: Record<string, string> = { ...exit.headers };
  for (const [name, value] of extra) headers[name] = value;
  headers['Content-Length'] = String(Buffer.byteLength(exit.body));
  res.writeHead(exit.status, headers);
  res.end(req.method === 'HEAD' ? undefined : exit.body);
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
    const started = Date.now();
    const requestId = randomBytes(16).toString('hex');
    const { config, router, hosts } = deps.current();
    const method = (req.method ?? 'GET').toUpperCase();
    const target = splitTarget(req.url ?? '/');
    const path = normalizePath(target.path);
    const route = router.match(method, path);
    const kongHeaders = new Map([['X-Kong-Request-Id', requestId]]);
    let ctx: RequestContext | null = null;

    res.on('finish', () => {
      // The path only: a query string may carry a key.
      deps.logger.info(
        {
          method,
          path,
          status: res.statusCode,
          route: route?.name ?? null,
          consumer: ctx?.consumer?.username ?? null,
          request_id: requestId,
          ms: Date.now() - started,
        },
        'request',
      );
    });

    if (!route) {
      send(req, res, renderError(config.errorTemplate, 404, 'no Route matched with those values', requestId), kongHeaders);
      return;
    }

    const context = new RequestContext(req, method, path, target.query, requestId, config, route);
    ctx = context;
    const ran: PluginInstance[] = [];
    const responseHeaders = (): Map<string, string> => {
      for (const plugin of ran) plugin.definition.headerFilter?.(context, plugin.config);
      return new Map([...context.responseHeaders, ...kongHeaders]);
    };
    const sendExit = (exit: Exit): void => send(req, res, exit, responseHeaders());

    void (async () => {
      for (const plugin of route.plugins) {
        ran.push(plugin);
        const exit = await plugin.definition.access(context, plugin.config, plugin);
        if (exit) {
          sendExit(exit);
          return;
        }
      }
      await proxy(context, res, { agent: deps.agent, hosts, listenPort: deps.listenPort(), responseHeaders, sendExit });
    })().catch((err: unknown) => {
      deps.logger.error({ err, request_id: requestId }, 'unexpected error');
      if (!res.headersSent) sendExit(context.error(500, 'An unexpected error occurred'));
      else res.destroy();
    });
  };
}

import type { Middleware } from 'koa';
import type { ServiceMetrics } from '../metrics';

// Node's parser only lets known methods through; the list keeps the label's values few anyway.
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']);

/** Counts and times every request the app answers, by the route pattern it matched. */
export function requestMetrics(metrics: ServiceMetrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // A path no route matched is one series, whatever was asked for.
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      metrics.observeRequest(
        { route: route === undefined ? 'unmatched' : String(route), method: METHODS.has(ctx.method) ? ctx.method : 'other', status: ctx.status },
        (performance.now() - started) / 1000,
      );
    }
  };
}

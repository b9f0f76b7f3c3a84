import type { Middleware } from 'koa';
import { errorCode, isDatabaseUnavailable } from '../../db/errors';
import type { Reachability } from '../../db/reachability';
import { HttpError, MESSAGES, notFound, unavailable } from '../errors';
import type { Logger } from '../logger';
import type { ServiceMetrics } from '../metrics';

// Node's parser only lets known methods through; the list keeps the label's values few anyway.
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']);

interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof HttpError) {
    return { status: error.status, body: { error: error.message, ...error.extra }, headers: error.headers };
  }
  // null and primitives carry no status (a thrown null is tested).
  if (error && typeof error === 'object') {
    if (isDatabaseUnavailable(error)) {
      return toErrorResponse(unavailable());
    }
    // Errors from Koa itself, its routers and raw-body (http-errors: a 4xx with expose) are safe to show.
    const { status, expose, message } = error as { status?: number; expose?: boolean; message?: string };
    if (typeof status === 'number' && status >= 400 && status < 500 && expose && message) {
      return { status, body: { error: message } };
    }
  }
  return { status: 500, body: { error: MESSAGES.internal } };
}

/** The request's outer shell, Koa's one error middleware; `database` says an outage once, so its requests log at debug. */
export function requestOutcome(logger: Logger, metrics?: ServiceMetrics, database?: Reachability): Middleware {
  // Request lines skip pino's redaction pass: their fields are fixed and none is a redacted path.
  // Stryker disable next-line ObjectLiteral,ArrayDeclaration: equivalent, speed only
  const lines = logger.child({}, { redact: [] });
  return async (ctx, next) => {
    const started = performance.now();
    ctx.state.requestId = ctx.get('X-Request-ID') || undefined;
    try {
      await next();
      if (ctx.body == null) {
        // Nothing answered: no route has this path (a path a route has answers its own 405).
        if (ctx.status === 404) throw notFound();
      }
    } catch (error) {
      const response = toErrorResponse(error);
      if (response.status >= 500) {
        // Name and code only: driver messages quote SQL and bound values, which may be internal.
        const line = { reqId: ctx.state.requestId, err: { name: (error as Error)?.name, code: errorCode(error) } };
        if (database?.failed(error)) logger.debug(line, 'request failed: the database cannot be reached');
        else logger.error(line, 'request failed');
      }
      ctx.status = response.status;
      ctx.set(response.headers ?? {});
      ctx.body = response.body;
    } finally {
      const ms = performance.now() - started;
      lines.info(
        {
          reqId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms,
          consumer: ctx.state.consumer?.username,
        },
        'request',
      );
      if (metrics) {
        // A path no route matched is one series, whatever was asked for.
        const labels = {
          route: ctx.state.route ?? 'unmatched',
          method: METHODS.has(ctx.method) ? ctx.method : 'other',
          status: String(ctx.status),
        };
        metrics.requestCount.inc(labels);
        metrics.requestDuration.observe(labels, ms / 1000);
      }
    }
  };
}

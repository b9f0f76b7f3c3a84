import type { Middleware } from 'koa';
import { errorCode, isDatabaseUnavailable } from '../../db/errors';
import { HttpError } from '../errors';
import type { Logger } from '../logger';

export const RETRY_AFTER_SECONDS = '5';

interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** Errors thrown by koa-bodyparser: co-body's JSON.parse failures, raw-body's typed errors. */
function bodyParserError(error: { type?: unknown; status?: unknown }): ErrorResponse | undefined {
  if (error instanceof SyntaxError) return { status: 400, body: { error: 'Malformed JSON body' } };
  switch (error.type) {
    case 'entity.parse.failed':
      return { status: 400, body: { error: 'Malformed JSON body' } };
    case 'entity.too.large':
      return { status: 413, body: { error: 'Request body too large: the limit is 100 KB' } };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { status: 415, body: { error: 'Unsupported body encoding: send UTF-8 JSON' } };
    case 'request.aborted':
    case 'request.size.invalid':
      return { status: 400, body: { error: 'Request body was incomplete' } };
    default:
      return undefined;
  }
}

export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof HttpError) {
    return { status: error.status, body: { error: error.message, ...error.extra }, headers: error.headers };
  }
  if (error && typeof error === 'object') {
    const fromBody = bodyParserError(error as { type?: unknown });
    if (fromBody) return fromBody;
    if (isDatabaseUnavailable(error)) {
      return {
        status: 503,
        body: { error: 'Service temporarily unavailable. Retry in a few seconds.' },
        headers: { 'Retry-After': RETRY_AFTER_SECONDS },
      };
    }
    // Errors from Koa itself and its routers (405 and the like) are safe to show.
    const { status, expose, message } = error as { status?: number; expose?: boolean; message?: string };
    if (typeof status === 'number' && status >= 400 && status < 500 && expose && message) {
      return { status, body: { error: message } };
    }
  }
  return { status: 500, body: { error: 'Internal server error' } };
}

/**
 * The one place that writes error bodies: every throw below it, and every request no route
 * answered, becomes `{"error": "..."}` with the right status.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null) {
        // Nothing answered (404), or a router set 405/501 with its Allow header and no body.
        if (ctx.status === 404) throw new HttpError(404, 'Not found');
        if (ctx.status === 405 || ctx.status === 501) throw new HttpError(405, 'Method not allowed');
      }
    } catch (error) {
      const response = toErrorResponse(error);
      if (response.status >= 500) {
        // Name and code only: driver messages quote SQL and bound values, which may be internal.
        logger.error(
          { reqId: ctx.state.requestId, err: { name: (error as Error)?.name, code: errorCode(error) } },
          'request failed',
        );
      }
      ctx.status = response.status;
      ctx.set(response.headers ?? {});
      ctx.body = response.body;
    }
  };
}

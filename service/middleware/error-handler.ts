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

export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof HttpError) {
    return { status: error.status, body: { error: error.message, ...error.extra }, headers: error.headers };
  }
  // Stryker disable next-line ConditionalExpression: equivalent, a primitive has no status either
  if (error && typeof error === 'object') {
    if (isDatabaseUnavailable(error)) {
      return {
        status: 503,
        body: { error: 'Service temporarily unavailable. Retry in a few seconds.' },
        headers: { 'Retry-After': RETRY_AFTER_SECONDS },
      };
    }
    // Errors from Koa itself, its routers and raw-body (http-errors: a 4xx with expose) are safe
    // to show. json-body.ts turns the body errors partners meet into its own messages.
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

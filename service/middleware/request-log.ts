import type { Middleware } from 'koa';
import type { Logger } from '../logger';

/**
 * One line per request. The path is logged without its query string: `api_key` may be in it,
 * and filters are not worth the risk. Headers and bodies are never logged.
 */
export function requestLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    ctx.state.requestId = ctx.get('X-Request-ID') || undefined;
    try {
      await next();
    } finally {
      logger.info(
        {
          reqId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          consumer: ctx.state.consumer?.username,
        },
        'request',
      );
    }
  };
}

import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import { HttpError } from '../errors';

/**
 * The router's allowedMethods, except that OPTIONS is a 405 like every other method a path does
 * not serve (decisions.md): koa-router would answer it 200 with an empty body. Allow stays set.
 */
export function methodNotAllowed(router: Router): RouterMiddleware {
  const allowedMethods = router.allowedMethods();
  return async (ctx, next) => {
    await allowedMethods(ctx, next);
    // No route serves OPTIONS: a 200 to it is allowedMethods' answer (Allow set, empty body).
    if (ctx.method === 'OPTIONS' && ctx.status === 200) throw new HttpError(405, 'Method not allowed');
  };
}

import Router from '@koa/router';
import type { z } from 'zod';
import type { RouterMiddleware } from '@koa/router';
import { methodNotAllowed } from '../errors';
import { requireConsumer } from '../middleware/gateway-trust';
import { jsonBody } from '../middleware/json-body';
import { conditional } from './conditional';
import type { Route, RouteDependencies } from './route';
import { bodyReader, paramsReader, queryReader } from './validate';

/** A route's steps: its guards, then its input read once by its own schemas, then its handler. */
function steps<S>(route: Route<z.ZodObject, z.ZodObject, z.ZodObject, S>, dependencies: RouteDependencies<S>): RouterMiddleware[] {
  const handle = route.handler(dependencies);
  const params = route.params && paramsReader(route.params);
  const query = route.query && queryReader(route.query);
  const body = route.body && bodyReader(route.body);
  const answer: RouterMiddleware = (ctx) =>
    handle(ctx, { params: params?.(ctx.params), query: query?.(ctx.query), body: body?.(ctx.request.body!) } as Parameters<typeof handle>[1]);
  return [
    ...(route.conditional ? [conditional] : []),
    ...(route.consumer ? [requireConsumer] : []),
    ...(route.body ? [jsonBody(route.body.optional)] : []),
    answer,
  ];
}

/** `routes` as one Koa router, each handler given `dependencies` once. */
export function routerOf<S>(routes: readonly Route<z.ZodObject, z.ZodObject, z.ZodObject, S>[], dependencies: RouteDependencies<S>): Router {
  const router = new Router();
  for (const route of routes) router[route.method](route.path, ...steps(route, dependencies));
  return router;
}

/** The routes that need a database turn, and those served before admission, each as a router. */
export function apiRouters<S>(routes: readonly Route<z.ZodObject, z.ZodObject, z.ZodObject, S>[], dependencies: RouteDependencies<S>): { open: Router; admitted: Router } {
  return {
    open: routerOf(routes.filter((route) => !route.database), dependencies),
    admitted: routerOf(routes.filter((route) => route.database), dependencies),
  };
}

/** A router, entered only by a path one of its routes matches. */
export function mount(router: Router): RouterMiddleware {
  const routes = router.routes();
  return (ctx, next) => {
    const layers = router.stack.filter((layer) => layer.match(ctx.path));
    if (layers.length === 0) return next();
    return routes(ctx, async () => {
      await next();
      if (ctx.status === 404 && ctx.body == null) throw methodNotAllowed([...new Set(layers.flatMap((layer) => layer.methods))]);
    });
  };
}

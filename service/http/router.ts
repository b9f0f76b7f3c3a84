import Router from '@koa/router';
import type { z } from 'zod';
import type { RouterContext, RouterMiddleware } from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import { methodNotAllowed } from '../errors';
import { requireConsumer } from '../middleware/gateway-trust';
import { jsonBody } from '../middleware/json-body';
import { conditional } from './conditional';
import type { Route, RouteDependencies } from './route';
import { bodyReader, paramsReader, queryReader } from './validate';

/** A route's steps: its name, its guards, then its input read once by its own schemas, then its handler. */
function steps<S>(
  route: Route<z.ZodObject, z.ZodObject, z.ZodObject, S>,
  dependencies: RouteDependencies<S>,
): RouterMiddleware[] {
  const handle = route.handler(dependencies);
  const params = route.params && paramsReader(route.params);
  const query = route.query && queryReader(route.query);
  const body = route.body && bodyReader(route.body);
  const answer: RouterMiddleware = (ctx) =>
    handle(ctx, {
      params: params?.(ctx.params),
      query: query?.(ctx.query),
      body: body?.(ctx.request.body!),
    } as Parameters<typeof handle>[1]);
  return [
    named(route.path),
    ...(route.conditional ? [conditional] : []),
    ...(route.consumer ? [requireConsumer] : []),
    ...(route.body ? [jsonBody(route.body.optional)] : []),
    answer,
  ];
}

/** `routes` as one Koa router, each handler given `dependencies` once and its steps chained once: routes() then chains one function per route, not each step, per request. */
export function routerOf<S>(
  routes: readonly Route<z.ZodObject, z.ZodObject, z.ZodObject, S>[],
  dependencies: RouteDependencies<S>,
): Router {
  const router = new Router();
  for (const route of routes) router[route.method](route.path, compose(steps(route, dependencies)));
  return router;
}

/** The routes that need a database turn, and those served before admission, each as a router. */
export function apiRouters<S>(
  routes: readonly Route<z.ZodObject, z.ZodObject, z.ZodObject, S>[],
  dependencies: RouteDependencies<S>,
): { open: Router; admitted: Router } {
  return {
    open: routerOf(
      routes.filter((route) => !route.database),
      dependencies,
    ),
    admitted: routerOf(
      routes.filter((route) => route.database),
      dependencies,
    ),
  };
}

declare module 'koa' {
  interface DefaultState {
    /** The matched route's path as declared (`/api/v1/jobs/:id`): the metrics' label. */
    route?: string;
  }
}

/** A route's first step: names it as declared (`/api/v1/jobs/:id`) for the metrics, before any guard can refuse. */
export function named(path: string): RouterMiddleware {
  return (ctx, next) => {
    ctx.state.route = path;
    return next();
  };
}

/** Every method the routers' matched paths serve (@koa/router's documented `ctx.matched`), in declaration order. */
function served(ctx: RouterContext): string[] {
  const methods = new Set<string>();
  for (const layer of ctx.matched ?? []) for (const method of layer.methods) methods.add(method);
  return [...methods];
}

/**
 * @koa/router's routes(): the first route matching path and method answers (HEAD with GET), an
 * unknown path goes on. A path served under other methods only (OPTIONS and methods the router does
 * not implement too) is our JSON 405 once nothing downstream answered; allowedMethods() would answer 200 or 501.
 */
export function mount(router: Router): Middleware {
  const dispatch = router.routes();
  return async (ctx, next) => {
    const routed = ctx as RouterContext;
    await dispatch(routed, async () => {
      await next();
      const allow = served(routed);
      if (allow.length > 0 && ctx.status === 404 && ctx.body == null) throw methodNotAllowed(allow);
    });
  };
}

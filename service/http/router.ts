import Router from '@koa/router';
import type { z } from 'zod';
import type { RouterMiddleware } from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
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

declare module 'koa' {
  interface DefaultState {
    /** The matched route's path as declared (`/api/v1/jobs/:id`): the metrics' label. */
    route?: string;
  }
}

/**
 * A router, entered only by a path one of its routes matches: the first route matching path and
 * method answers, and a path matched only under other methods is a 405 naming them. The router
 * compiles the paths (its layers' regexps, HEAD with GET); the dispatch is ours, so a request
 * matches once and runs a chain built at mount.
 */
export function mount(router: Router): Middleware {
  const routes = router.stack.map((layer) => ({ layer, path: String(layer.path), run: compose(layer.stack as Middleware[]) }));
  return (ctx, next) => {
    const path = ctx.path;
    let allowed: string[] | undefined;
    for (const { layer, path: declared, run } of routes) {
      const found = layer.regexp.exec(path);
      if (found === null) continue;
      if (!layer.methods.includes(ctx.method)) {
        (allowed ??= []).push(...layer.methods);
        continue;
      }
      // The layer names and decodes its own parameters, as @koa/router's dispatch would.
      ctx.params = layer.params(path, found.slice(1));
      ctx.state.route = declared;
      return run(ctx, next);
    }
    if (allowed === undefined) return next();
    const methods = [...new Set(allowed)];
    return next().then(() => {
      if (ctx.status === 404 && ctx.body == null) throw methodNotAllowed(methods);
    });
  };
}

import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import Koa from 'koa';
import type { Database } from '../db/client';
import { Config } from './config';
import { docsPage } from './docs-page';
import { healthRouter } from './health';
import { apiRouter } from './jobs/http/routes';
import type { Logger } from './logger';
import type { ServiceMetrics } from './metrics';
import { createAdmission, readBodyFirst } from './middleware/database-turn';
import { singleHost, trustGateway } from './middleware/gateway-trust';
import { requestOutcome } from './middleware/request-outcome';
import { HttpError } from './errors';
import { loadWebhookSettings, type WebhookSettings } from './webhooks/settings';

export interface AppDependencies {
  db: Database;
  /** Unset limits take their defaults from service/config.ts. */
  config: Pick<Config, 'gatewaySecret'> & Partial<Pick<Config, 'dbPoolSize' | 'dbQueueLimit' | 'dbQueryTimeoutMs' | 'readyTimeoutMs' | 'databaseReadUrls' | 'bodyReadTimeoutMs'>>;
  logger: Logger;
  /** Where requests and admission are counted (service/metrics.ts); none when unset. */
  metrics?: ServiceMetrics;
  /** Webhook subscriptions' settings (service/webhooks/settings.ts); unset: none configured, creating one is a 503. */
  webhooks?: WebhookSettings;
}


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

/**
 * A router and its 405s, entered only by a path one of its routes matches: an API request passes
 * the probes' and the document's routers by at the cost of their regex tests.
 */
function mount(router: Router): RouterMiddleware {
  const routes = router.routes();
  const notAllowed = methodNotAllowed(router);
  return (ctx, next) => (router.stack.some((layer) => layer.match(ctx.path)) ? routes(ctx, () => notAllowed(ctx, next)) : next());
}

/** Only /docs and the paths under it enter the docs page; every other request passes it by. */
function underDocs(docs: Koa.Middleware): Koa.Middleware {
  return (ctx, next) => (ctx.path === '/docs' || ctx.path.startsWith('/docs/') ? docs(ctx, next) : next());
}

/** Builds the Koa app; server.ts listens, tests drive app.callback() in-process. */
export function createApp({ db, config, logger, metrics, webhooks }: AppDependencies): Koa {
  const app = new Koa();
  app.context.webhooks = webhooks ?? loadWebhookSettings({});
  app.silent = true; // the error middleware logs failures, without their messages

  const defaults = Config.parse({});
  // Overload: a wait for a database turn bounded by its expected length, then 503 (service/middleware/database-turn.ts).
  const admission = createAdmission({
    // One pool per server (primary and each replica), each of DB_POOL_SIZE connections.
    concurrency: (config.dbPoolSize ?? defaults.dbPoolSize) * (1 + (config.databaseReadUrls?.length ?? 0)),
    queueLimit: config.dbQueueLimit,
    queueTimeoutMs: config.dbQueryTimeoutMs ?? defaults.dbQueryTimeoutMs,
  });
  const health = healthRouter(db, config.readyTimeoutMs ?? defaults.readyTimeoutMs, admission);
  const jobs = apiRouter(db, true);

  if (metrics) metrics.watchAdmission(admission.stats);
  app.use(requestOutcome(logger, metrics));
  app.use(singleHost());
  // Probes answer before the gateway check: an orchestrator calls them directly.
  app.use(mount(health));
  app.use(underDocs(docsPage())); // public, keyless: before the gateway-secret check
  app.use(trustGateway(config.gatewaySecret));
  // The OpenAPI document needs no database turn.
  const openApi = apiRouter(db, false);
  app.use(mount(openApi));
  // The body arrives before a turn is taken: a slow or broken upload never holds one.
  app.use(readBodyFirst(config.bodyReadTimeoutMs ?? defaults.bodyReadTimeoutMs));
  app.use(admission.middleware);
  app.use(jobs.routes());
  // Sets 405 + Allow for a known path with another method; the error middleware adds the body.
  app.use(methodNotAllowed(jobs));
  return app;
}

import Koa from 'koa';
import type { Database } from '../db/client';
import type { Reachability } from '../db/reachability';
import { Config } from './config';
import { docsPage } from './docs-page';
import { healthRouter } from './health';
import { apiRouters, mount } from './http/router';
import { apiDocument, ROUTES } from './api/routes';
import type { ApiSettings } from './api/settings';
import type { Logger } from './logger';
import type { ServiceMetrics } from './metrics';
import { createAdmission } from './middleware/admission';
import { readBodyFirst } from './middleware/read-body';
import { headerBlock, trustGateway } from './middleware/gateway-trust';
import { requestOutcome } from './middleware/request-outcome';
import { loadWebhookSettings, type WebhookSettings } from './webhooks/settings';

export interface AppDependencies {
  db: Database;
  /** Unset limits take their defaults from service/config.ts. */
  config: Pick<Config, 'gatewaySecret'> &
    Partial<
      Pick<
        Config,
        | 'gatewaySecretNext'
        | 'dbPoolSize'
        | 'dbQueueLimit'
        | 'dbQueryTimeoutMs'
        | 'readyTimeoutMs'
        | 'databaseReadUrls'
        | 'bodyReadTimeoutMs'
        | 'publicUrl'
      >
    >;
  logger: Logger;
  /** Where requests and admission are counted (service/metrics.ts); none when unset. */
  metrics?: ServiceMetrics;
  /** Webhook subscriptions' settings (service/webhooks/settings.ts); unset: none configured, creating one is a 503. */
  webhooks?: WebhookSettings;
  /** The database's reachability (db/reachability.ts): an outage is its one line, not one per request. */
  reachability?: Reachability;
}

/** Only /docs and the paths under it enter the docs page; every other request passes it by. */
function underDocs(docs: Koa.Middleware): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path === '/docs' || ctx.path.startsWith('/docs/')) await docs(ctx, next);
    else await next();
  };
}

/** Builds the Koa app; server.ts listens, tests drive app.callback() in-process. */
export function createApp({ db, config, logger, metrics, webhooks, reachability }: AppDependencies): Koa {
  const app = new Koa();
  app.silent = true; // the error middleware logs failures, without their messages

  const defaults = Config.parse({});
  // Overload: a wait for a database turn bounded by its expected length, then 503 (service/middleware/admission.ts).
  const admission = createAdmission({
    // One pool per server (primary and each replica), each of DB_POOL_SIZE connections.
    concurrency: (config.dbPoolSize ?? defaults.dbPoolSize) * (1 + (config.databaseReadUrls?.length ?? 0)),
    queueLimit: config.dbQueueLimit,
    queueTimeoutMs: config.dbQueryTimeoutMs ?? defaults.dbQueryTimeoutMs,
  });
  const health = healthRouter(db, config.readyTimeoutMs ?? defaults.readyTimeoutMs, admission);
  const settings: ApiSettings = { webhooks: webhooks ?? loadWebhookSettings({}), publicUrl: config.publicUrl };
  const api = apiRouters(ROUTES, { db, settings });

  if (metrics) metrics.watchAdmission(admission.stats);
  app.use(requestOutcome(logger, metrics, reachability));
  app.use(headerBlock());
  // Probes answer before the gateway check: an orchestrator calls them directly.
  app.use(mount(health));
  // Built when the document is first asked for; both document paths list the public address in servers.
  app.use(underDocs(docsPage(() => apiDocument(settings)))); // public, keyless: before the gateway-secret check
  app.use(trustGateway(config, { logger, metrics }));
  // The OpenAPI document needs no database turn.
  app.use(mount(api.open));
  // The body arrives before a turn is taken: a slow or broken upload never holds one.
  app.use(readBodyFirst(config.bodyReadTimeoutMs ?? defaults.bodyReadTimeoutMs));
  app.use(admission.middleware);
  app.use(mount(api.admitted));
  return app;
}

import Koa from 'koa';
import type { Database } from '../db/client';
import { Config } from './config';
import { docsPage } from './docs-page';
import { healthRouter } from './health';
import { apiRouter } from './jobs/http/routes';
import type { Logger } from './logger';
import type { ServiceMetrics } from './metrics';
import { createAdmission } from './middleware/admission';
import { errorHandler } from './middleware/error-handler';
import { requireGatewaySecret } from './middleware/gateway-secret';
import { identity } from './middleware/identity';
import { methodNotAllowed } from './middleware/method-not-allowed';
import { requestLog } from './middleware/request-log';
import { requestMetrics } from './middleware/request-metrics';
import { readBodyFirst } from './middleware/request-body';
import { singleHost } from './middleware/single-host';

export interface AppDependencies {
  db: Database;
  /** Unset limits take their defaults from service/config.ts. */
  config: Pick<Config, 'gatewaySecret'> & Partial<Pick<Config, 'dbPoolSize' | 'dbQueueLimit' | 'dbQueryTimeoutMs' | 'readyTimeoutMs' | 'databaseReadUrls' | 'bodyReadTimeoutMs'>>;
  logger: Logger;
  /** Where requests and admission are counted (service/metrics.ts); none when unset. */
  metrics?: ServiceMetrics;
}


/** Builds the Koa app; server.ts listens, tests drive app.callback() in-process. */
export function createApp({ db, config, logger, metrics }: AppDependencies): Koa {
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
  const jobs = apiRouter(db, true);

  if (metrics) {
    app.use(requestMetrics(metrics));
    metrics.watchAdmission(admission.stats);
  }
  app.use(requestLog(logger));
  app.use(errorHandler(logger));
  app.use(singleHost());
  // Probes answer before the gateway check: an orchestrator calls them directly.
  app.use(health.routes());
  app.use(methodNotAllowed(health));
  app.use(docsPage()); // public, keyless: before the gateway-secret check
  app.use(requireGatewaySecret(config.gatewaySecret));
  app.use(identity());
  // The OpenAPI document needs no database turn.
  const openApi = apiRouter(db, false);
  app.use(openApi.routes());
  app.use(methodNotAllowed(openApi));
  // The body arrives before a turn is taken: a slow or broken upload never holds one.
  app.use(readBodyFirst(config.bodyReadTimeoutMs ?? defaults.bodyReadTimeoutMs));
  app.use(admission.middleware);
  app.use(jobs.routes());
  // Sets 405 + Allow for a known path with another method; the error middleware adds the body.
  app.use(methodNotAllowed(jobs));
  return app;
}

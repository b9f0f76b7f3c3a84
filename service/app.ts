import Koa from 'koa';
import type { Database } from '../db/client';
import { Config } from './config';
import { healthRouter } from './health';
import { apiRouter } from './jobs/http/routes';
import type { Logger } from './logger';
import { admission } from './middleware/admission';
import { errorHandler } from './middleware/error-handler';
import { requireGatewaySecret } from './middleware/gateway-secret';
import { identity } from './middleware/identity';
import { methodNotAllowed } from './middleware/method-not-allowed';
import { requestLog } from './middleware/request-log';

export interface AppDependencies {
  db: Database;
  /** Unset limits take their defaults from service/config.ts. */
  config: Pick<Config, 'gatewaySecret'> & Partial<Pick<Config, 'dbPoolSize' | 'dbQueueLimit' | 'dbQueryTimeoutMs' | 'readyTimeoutMs' | 'databaseReadUrls'>>;
  logger: Logger;
}


/** Builds the Koa app; server.ts listens, tests drive app.callback() in-process. */
export function createApp({ db, config, logger }: AppDependencies): Koa {
  const app = new Koa();
  app.silent = true; // the error middleware logs failures, without their messages

  const defaults = Config.parse({});
  const health = healthRouter(db, config.readyTimeoutMs ?? defaults.readyTimeoutMs);
  const jobs = apiRouter(db, true);

  app.use(requestLog(logger));
  app.use(errorHandler(logger));
  // Probes answer before the gateway check: an orchestrator calls them directly.
  app.use(health.routes());
  app.use(methodNotAllowed(health));
  app.use(requireGatewaySecret(config.gatewaySecret));
  app.use(identity());
  // The OpenAPI document needs no database turn.
  const openApi = apiRouter(db, false);
  app.use(openApi.routes());
  app.use(methodNotAllowed(openApi));
  // Overload: a bounded wait for a database turn, then 503 (service/middleware/admission.ts).
  app.use(
    admission({
      // One pool per server (primary and each replica), each of DB_POOL_SIZE connections.
      concurrency: (config.dbPoolSize ?? defaults.dbPoolSize) * (1 + (config.databaseReadUrls?.length ?? 0)),
      queueLimit: config.dbQueueLimit ?? defaults.dbQueueLimit,
      queueTimeoutMs: config.dbQueryTimeoutMs ?? defaults.dbQueryTimeoutMs,
    }),
  );
  app.use(jobs.routes());
  // Sets 405 + Allow for a known path with another method; the error middleware adds the body.
  app.use(methodNotAllowed(jobs));
  return app;
}

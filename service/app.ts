import Koa from 'koa';
import type { Database } from '../db/client';
import type { Config } from './config';
import { healthRouter } from './health';
import { jobsRouter } from './jobs/routes';
import type { Logger } from './logger';
import { errorHandler } from './middleware/error-handler';
import { requireGatewaySecret } from './middleware/gateway-secret';
import { identity } from './middleware/identity';
import { requestLog } from './middleware/request-log';

export interface AppDependencies {
  db: Database;
  config: Pick<Config, 'gatewaySecret'>;
  logger: Logger;
}


/** Builds the Koa app; server.ts listens, tests drive app.callback() in-process. */
export function createApp({ db, config, logger }: AppDependencies): Koa {
  const app = new Koa();
  app.silent = true; // the error middleware logs failures, without their messages

  const health = healthRouter(db);
  const jobs = jobsRouter(db);

  app.use(requestLog(logger));
  app.use(errorHandler(logger));
  // Probes answer before the gateway check: an orchestrator calls them directly.
  app.use(health.routes());
  app.use(health.allowedMethods());
  app.use(requireGatewaySecret(config.gatewaySecret));
  app.use(identity());
  app.use(jobs.routes());
  // Sets 405 + Allow for a known path with another method; the error middleware adds the body.
  app.use(jobs.allowedMethods());
  return app;
}

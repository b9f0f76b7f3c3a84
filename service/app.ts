import Koa from 'koa';
import type { Database } from '../db/client';
import type { Config } from './config';
import { HttpError } from './errors';
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

const methodNotAllowed = () => new HttpError(405, 'Method not allowed');
const allowedMethodsOptions = { throw: true, methodNotAllowed, notImplemented: methodNotAllowed };

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
  app.use(health.allowedMethods(allowedMethodsOptions));
  app.use(requireGatewaySecret(config.gatewaySecret));
  app.use(identity());
  app.use(jobs.routes());
  app.use(jobs.allowedMethods(allowedMethodsOptions));
  return app;
}

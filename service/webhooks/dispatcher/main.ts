// The webhook dispatcher's process (compose webhook-dispatcher; npm start runs one too); settings in service/webhooks/settings.ts.
import { describeDatabaseUrl, openDatabase } from '../../../db/client';
import { migrateDatabase, startupDatabaseError } from '../../../db/migrate';
import { loadConfig } from '../../config';
import { createLogger, exitOnCrash, flushNow, type Logger } from '../../logger';
import { serveMetrics, type MetricsServer } from '../../metrics-server';
import { aSealedSecret } from '../../../db/webhooks/delivery';
import type { Database } from '../../../db/client';
import { decryptSecret } from '../secrets';
import { startDispatcher } from './dispatcher';
import { createDispatcherMetrics } from './metrics';
import { loadWebhookSettings } from '../settings';

export interface RunningDispatcher {
  logger: Logger;
  metricsUrl?: string;
  stop(): Promise<void>;
}

export async function runDispatcher(env: NodeJS.ProcessEnv = process.env): Promise<RunningDispatcher> {
  const config = loadConfig(env);
  const settings = loadWebhookSettings(env);
  if (!settings.secretsKey) throw new Error('WEBHOOK_SECRETS_KEY is not set: the dispatcher cannot sign without the subscriptions\' secrets (e.g. WEBHOOK_SECRETS_KEY=$(openssl rand -base64 32), the same value the service has)');
  const metricsPort = env.WEBHOOK_METRICS_PORT === undefined || env.WEBHOOK_METRICS_PORT === '' ? undefined : Number(env.WEBHOOK_METRICS_PORT);
  if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort <= 65535)) throw new Error('Invalid configuration: WEBHOOK_METRICS_PORT must be a port number (0-65535)');
  const logger = createLogger(config.logLevel).child({ component: 'webhook-dispatcher' });
  try {
    await migrateDatabase(config.databaseUrl, { lockTimeoutSeconds: config.migrationLockTimeoutSeconds });
  } catch (error) {
    throw new Error(startupDatabaseError(config.databaseUrl, error));
  }
  const database = openDatabase(config.databaseUrl, [], { connectionLimit: 10, connectTimeoutMs: config.dbConnectTimeoutMs, queryTimeoutMs: config.dbQueryTimeoutMs });
  try {
    await proveSecretsKey(database.db, settings.secretsKey);
  } catch (error) {
    await database.close();
    throw error;
  }
  const metrics = metricsPort === undefined ? undefined : createDispatcherMetrics();
  let metricsServer: MetricsServer | undefined;
  if (metrics) {
    try {
      metricsServer = await serveMetrics(metrics.registry, metricsPort!, config.host);
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  const dispatcher = startDispatcher({ db: database.db, settings: { ...settings, secretsKey: settings.secretsKey }, logger, metrics });
  logger.info({ owner: dispatcher.owner, database: describeDatabaseUrl(config.databaseUrl), metrics: metricsServer?.url, allowHttp: settings.policy.allowHttp, allowed: settings.policy.allowed }, 'webhook dispatcher running');
  flushNow(logger);
  return {
    logger,
    metricsUrl: metricsServer?.url,
    async stop() {
      await dispatcher.stop();
      await metricsServer?.close();
      await database.close();
      logger.info('webhook dispatcher stopped');
      flushNow(logger);
    },
  };
}

/** A key other than the service's opens no secret: refused at start-up rather than failing every walk unseen. */
async function proveSecretsKey(db: Database, key: Buffer): Promise<void> {
  const sealed = await aSealedSecret(db);
  if (!sealed) return;
  try {
    decryptSecret(key, sealed);
  } catch {
    throw new Error("WEBHOOK_SECRETS_KEY cannot open the webhook secrets the service sealed: start the dispatcher with the service's WEBHOOK_SECRETS_KEY");
  }
}

async function main(): Promise<void> {
  let running: RunningDispatcher;
  try {
    running = await runDispatcher();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
  exitOnCrash(running.logger);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void running.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) void main();

// The webhook dispatcher's process (compose webhook-dispatcher; npm start runs one too); settings in service/webhooks/settings.ts.
import { describeDatabaseUrl, openDatabase } from '../../../db/client';
import { migrateDatabase, startupDatabaseError } from '../../../db/migrate';
import { loadConfig } from '../../config';
import { newHistoryLog } from '../../feed-history';
import { createLogger, flushNow, type Logger } from '../../logger';
import { serveMetrics, type MetricsServer } from '../../metrics-server';
import { logMigrations, runProcess } from '../../process';
import { DATABASE_UP_GAUGES, watchDatabase } from '../../../db/reachability';
import { clearUnopenable, showUnopenable } from '../../../db/webhooks/sealing';
import type { Database } from '../../../db/client';
import { describeKeyring, proveKeyring } from '../keyring-check';
import type { Keyring } from '../secrets';
import { startDispatcher } from './dispatcher';
import { createDispatcherMetrics } from './metrics';
import { keyringOf, loadWebhookSettings } from '../settings';

export interface RunningDispatcher {
  logger: Logger;
  metricsUrl?: string;
  stop(): Promise<void>;
}

export async function runDispatcher(env: NodeJS.ProcessEnv = process.env): Promise<RunningDispatcher> {
  const config = loadConfig(env);
  const settings = loadWebhookSettings(env);
  if (!settings.secretsKey)
    throw new Error(
      "WEBHOOK_SECRETS_KEY is not set: the dispatcher cannot sign without the subscriptions' secrets (e.g. WEBHOOK_SECRETS_KEY=$(openssl rand -base64 32), the same value the service has)",
    );
  const metricsPort =
    env.WEBHOOK_METRICS_PORT === undefined || env.WEBHOOK_METRICS_PORT === ''
      ? undefined
      : Number(env.WEBHOOK_METRICS_PORT);
  if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort <= 65535))
    throw new Error('Invalid configuration: WEBHOOK_METRICS_PORT must be a port number (0-65535)');
  const logger = createLogger(config.logLevel).child({ component: 'webhook-dispatcher' });
  try {
    logMigrations(
      logger,
      await migrateDatabase(config.databaseUrl, { lockTimeoutSeconds: config.migrationLockTimeoutSeconds }),
    );
  } catch (error) {
    throw new Error(startupDatabaseError(config.databaseUrl, error), { cause: error });
  }
  const database = openDatabase(config.databaseUrl, [], {
    connectionLimit: 10,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    queryTimeoutMs: config.dbQueryTimeoutMs,
    onNewHistory: newHistoryLog(logger),
  });
  const keyring = keyringOf({ ...settings, secretsKey: settings.secretsKey });
  let unopenable: string[];
  try {
    unopenable = await checkKeyring(database.db, keyring, logger);
  } catch (error) {
    await database.close();
    throw error;
  }
  const metrics = metricsPort === undefined ? undefined : createDispatcherMetrics();
  // An outage is one line and webhook_dispatcher_database_up 0, which compose's health check reads.
  const reachability = watchDatabase({
    url: config.databaseUrl,
    logger,
    registry: metrics?.registry,
    gauge: DATABASE_UP_GAUGES.dispatcher,
    failures: 'dispatcher ticks failed',
  });
  let metricsServer: MetricsServer | undefined;
  if (metrics) {
    try {
      metricsServer = await serveMetrics(metrics.registry, metricsPort!, config.host);
    } catch (error) {
      reachability.stop();
      await database.close();
      throw error;
    }
  }
  const dispatcher = startDispatcher({
    db: database.db,
    settings: { ...settings, secretsKey: settings.secretsKey },
    logger,
    metrics,
    reachability,
    unopenable,
  });
  logger.info(
    {
      owner: dispatcher.owner,
      database: describeDatabaseUrl(config.databaseUrl),
      keyring: describeKeyring(keyring),
      metrics: metricsServer?.url,
      allowHttp: settings.policy.allowHttp,
      allowed: settings.policy.allowed,
    },
    'webhook dispatcher running',
  );
  flushNow(logger);
  return {
    logger,
    metricsUrl: metricsServer?.url,
    async stop() {
      await dispatcher.stop();
      await metricsServer?.close();
      reachability.stop();
      await database.close();
      logger.info('webhook dispatcher stopped');
      flushNow(logger);
    },
  };
}

/**
 * A keyring that opens no stored secret is refused (proveKeyring). One that opens some starts: each
 * subscription it cannot open is logged once and shown to its owner; those it opens again are due at once.
 */
async function checkKeyring(db: Database, keyring: Keyring, logger: Logger): Promise<string[]> {
  const survey = await proveKeyring(db, keyring);
  for (const one of survey.unopenable)
    logger.warn(
      {
        subscription: one.id,
        sealedUnder: one.sealedUnder ?? 'the form before key ids',
        keyring: describeKeyring(keyring),
      },
      "webhook secret cannot be opened with this dispatcher's keyring: deliveries to the subscription wait until its key is in WEBHOOK_SECRETS_KEY or WEBHOOK_SECRETS_KEY_PREVIOUS",
    );
  await showUnopenable(
    db,
    survey.unopenable.map((one) => one.id),
  );
  await clearUnopenable(db, survey.reopened);
  return survey.unopenable.map((one) => one.id);
}

if (require.main === module) void runProcess(() => runDispatcher());

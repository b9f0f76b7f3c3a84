// The webhook dispatcher's process (compose webhook-dispatcher; npm start runs one too); its settings come from service/config.ts, as the service's do.
import { describeDatabaseUrl, openDatabase } from '../db/client';
import { migrateDatabase, startupDatabaseError } from '../db/migrate';
import { loadConfig, type Config } from '../service/config';
import { newHistoryLog } from '../service/feed-history';
import { createLogger, flushNow, type Logger } from '../service/logger';
import { serveMetrics, type MetricsServer } from '../service/metrics-server';
import { logMigrations, runProcess } from '../service/process';
import { DATABASE_UP_GAUGES, watchDatabase, type Reachability } from '../db/reachability';
import { clearUnopenable, showUnopenable } from '../db/webhooks/sealing';
import type { Database } from '../db/client';
import { describeKeyring, proveKeyring } from '../service/webhooks/keyring-check';
import type { Keyring } from '../service/webhooks/secrets';
import { startDispatcher } from './dispatcher';
import { createDispatcherMetrics, type DispatcherMetrics } from './metrics';
import type { DispatcherSettings } from './run';
import { keyringOf } from '../service/webhooks/settings';

export interface RunningDispatcher {
  logger: Logger;
  metricsUrl?: string;
  stop(): Promise<void>;
}

/** Starts as the service does: the one configuration, the migration, the database; then the key check, metrics and the loop. */
export async function runDispatcher(env: NodeJS.ProcessEnv = process.env): Promise<RunningDispatcher> {
  const config = loadConfig(env);
  const settings = signingSettings(config);
  const logger = createLogger(config.logLevel).child({ component: 'webhook-dispatcher' });
  await migrate(config, logger);
  const database = openDatabase(config.databaseUrl, [], {
    connectionLimit: 10,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    queryTimeoutMs: config.dbQueryTimeoutMs,
    onNewHistory: newHistoryLog(logger),
  });
  const keyring = keyringOf(settings);
  let unopenable: string[];
  let watched: Watched;
  try {
    unopenable = await checkKeyring(database.db, keyring, logger);
    watched = await watch(config, logger);
  } catch (error) {
    await database.close();
    throw error;
  }
  const { metrics, reachability, metricsServer } = watched;
  const dispatcher = startDispatcher({ db: database.db, settings, logger, metrics, reachability, unopenable });
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

/** The webhook settings with the sealing key, without which there is nothing to sign with. */
function signingSettings(config: Config): DispatcherSettings {
  const { secretsKey } = config.webhooks;
  if (!secretsKey)
    throw new Error(
      "WEBHOOK_SECRETS_KEY is not set: the dispatcher cannot sign without the subscriptions' secrets (e.g. WEBHOOK_SECRETS_KEY=$(openssl rand -base64 32), the same value the service has)",
    );
  return { ...config.webhooks, secretsKey };
}

async function migrate(config: Config, logger: Logger): Promise<void> {
  try {
    logMigrations(
      logger,
      await migrateDatabase(config.databaseUrl, { lockTimeoutSeconds: config.migrationLockTimeoutSeconds }),
    );
  } catch (error) {
    throw new Error(startupDatabaseError(config.databaseUrl, error), { cause: error });
  }
}

interface Watched {
  metrics?: DispatcherMetrics;
  reachability: Reachability;
  metricsServer?: MetricsServer;
}

/** The database's reachability, and the metrics listener when WEBHOOK_METRICS_PORT is set. */
async function watch(config: Config, logger: Logger): Promise<Watched> {
  const port = config.webhookMetricsPort;
  const metrics = port === undefined ? undefined : createDispatcherMetrics();
  // An outage is one line and webhook_dispatcher_database_up 0, which compose's health check reads.
  const reachability = watchDatabase({
    url: config.databaseUrl,
    logger,
    registry: metrics?.registry,
    gauge: DATABASE_UP_GAUGES.dispatcher,
    failures: 'dispatcher ticks failed',
  });
  if (!metrics || port === undefined) return { reachability };
  try {
    return {
      metrics,
      reachability,
      metricsServer: await serveMetrics(metrics.registry, port, config.host),
    };
  } catch (error) {
    reachability.stop();
    throw error;
  }
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

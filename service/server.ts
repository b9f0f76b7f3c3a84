import http from 'node:http';
import { describeDatabaseUrl } from '../db/client';
import { pendingChangeCount } from '../db/jobs/pending-changes';
import { migrateDatabase, startupDatabaseError, type MigrationReport } from '../db/migrate';
import { openDatabase } from '../db/client';
import { DATABASE_UP_GAUGES, watchDatabase } from '../db/reachability';
import { seedIfEmpty } from '../db/seed';
import { createApp } from './app';
import { loadConfig, type Config } from './config';
import { clientErrorHandler, connectHandler } from './client-error';
import { newHistoryLog } from './feed-history';
import { startHousekeeping } from './housekeeping';
import { createLogger, flushNow, type Logger } from './logger';
import { createMetrics } from './metrics';
import { serveMetrics, type MetricsServer } from './metrics-server';
import { logMigrations, runProcess } from './process';
import { drainOnStop } from './shutdown';
import { checkServiceKeyring } from './webhooks/keyring-check';

// How often Node looks for requests past HEADERS_TIMEOUT_MS or their whole-request limit.
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

export interface RunningService {
  url: string;
  /** Where Prometheus scrapes, when METRICS_PORT is set. */
  metricsUrl?: string;
  logger: Logger;
  stop(): Promise<void>;
}

/** Migrates (creating the database), seeds the demo set into an empty table when SEED_DEMO_DATA=true, and listens. */
export async function runService(overrides: Partial<Config> = {}): Promise<RunningService> {
  const config = loadConfig(process.env, overrides);
  const { webhooks } = config;
  const logger = createLogger(config.logLevel);
  let seeded = 0;
  let migrations: MigrationReport;
  try {
    // Under the migration lock, so instances started together seed an empty table only once.
    migrations = await migrateDatabase(config.databaseUrl, {
      lockTimeoutSeconds: config.migrationLockTimeoutSeconds,
      underLock: async ({ db }) => {
        if (config.seedDemoData) seeded = await seedIfEmpty(db);
      },
    });
  } catch (error) {
    throw new Error(startupDatabaseError(config.databaseUrl, error), { cause: error });
  }
  const database = openDatabase(config.databaseUrl, config.databaseReadUrls, {
    connectionLimit: config.dbPoolSize,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    queryTimeoutMs: config.dbQueryTimeoutMs,
    onNewHistory: newHistoryLog(logger),
  });
  logMigrations(logger, migrations);
  if (seeded > 0) logger.info({ jobs: seeded }, 'loaded the demo jobs into an empty table');
  try {
    await checkServiceKeyring(database.db, webhooks, logger);
  } catch (error) {
    await database.close();
    throw error;
  }

  const metrics = config.metricsPort === undefined ? undefined : createMetrics();
  const reachability = watchDatabase({
    url: config.databaseUrl,
    logger,
    registry: metrics?.registry,
    gauge: DATABASE_UP_GAUGES.service,
  });
  const housekeeping = startHousekeeping({
    db: database.db,
    logger,
    failed: (task) => metrics?.observeHousekeepingFailure(task),
  });
  const app = createApp({ db: database.db, config, logger, metrics, webhooks, reachability });
  const handle = app.callback();
  const server = http.createServer(
    {
      headersTimeout: config.headersTimeoutMs,
      // A backstop for bodies no handler reads (the app reads the ones it needs within BODY_READ_TIMEOUT_MS).
      requestTimeout: config.headersTimeoutMs + config.bodyReadTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    (req, res) => void handle(req, res),
  );
  // Node 24 refuses a head of over 1000 fields as too large; headerBlock counts them as the gateways do (431).
  server.maxHeadersCount = 0;
  server.listen(config.port, config.host);
  const malformed = (status: number) => metrics?.observeMalformed(status);
  server.on('clientError', clientErrorHandler(config.clientErrorLingerMs, malformed));
  server.on('connect', connectHandler(config.clientErrorLingerMs, malformed));
  const drain = drainOnStop(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  }).catch(async (error: NodeJS.ErrnoException) => {
    reachability.stop();
    housekeeping.stop();
    await database.close();
    throw new Error(`Cannot listen on ${config.host}:${config.port} (${error.code ?? error.message})`);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host}:${port}`;
  let metricsServer: MetricsServer | undefined;
  if (metrics) {
    metrics.watchConnections(
      () =>
        new Promise((resolve, reject) =>
          server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
        ),
    );
    metrics.watchPool(() => database.stats());
    metrics.watchPendingChanges(() => pendingChangeCount(database.db));
    try {
      metricsServer = await serveMetrics(metrics.registry, config.metricsPort!, config.host);
    } catch (error) {
      server.close();
      server.closeAllConnections();
      reachability.stop();
      housekeeping.stop();
      await database.close();
      throw error;
    }
  }
  logger.info(
    {
      url,
      metrics: metricsServer?.url,
      database: describeDatabaseUrl(config.databaseUrl),
      gatewaySecret: Boolean(config.gatewaySecret),
      gatewaySecretNext: Boolean(config.gatewaySecretNext),
    },
    'jobs service listening',
  );
  flushNow(logger);

  return {
    url,
    metricsUrl: metricsServer?.url,
    logger,
    // Stops accepting, lets in-flight requests finish within SHUTDOWN_GRACE_MS, then closes what is left: sockets, and the pool even when its link is hung.
    async stop() {
      const drained = await drain(config.shutdownGraceMs);
      if (!drained)
        logger.warn({ graceMs: config.shutdownGraceMs }, 'grace period over: closed the requests still running');
      await metricsServer?.close();
      reachability.stop();
      housekeeping.stop();
      await database.close();
      logger.info('jobs service stopped');
      flushNow(logger);
    },
  };
}

if (require.main === module) {
  void runProcess(runService, (service) =>
    console.log(
      process.env.GATEWAY_SECRET
        ? `Jobs service listening on ${service.url} (only requests carrying the gateway secret${process.env.GATEWAY_SECRET_NEXT ? ' or the next one' : ''} are served)`
        : `Jobs service listening on ${service.url} (no gateway secret: send the X-Consumer-* identity headers yourself)`,
    ),
  );
}

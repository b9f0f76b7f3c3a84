import mysql from 'mysql2/promise';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { connectionOptions } from './client';
import { errorCode, isDatabaseUnreachable } from './errors';

/** The gauges that read 1 while the database answers, 0 while it does not: one per process. */
export const DATABASE_UP_GAUGES = {
  service: 'jobs_database_up',
  dispatcher: 'webhook_dispatcher_database_up',
} as const;

// While the database is down it is asked again this often; a probe gets this long to connect and answer.
const RETRY_MS = 1000;
const PROBE_TIMEOUT_MS = 2000;

export interface Reachability {
  /** Reports a failed database call; true when it failed because the database cannot be reached (log it at debug: the tracker has said so once). */
  failed(error: unknown): boolean;
  /** False from the moment a probe confirmed the database unreachable until one reaches it again. */
  isUp(): boolean;
  /** Asks the database now (when it is thought up): for a scrape, so that an idle process notices too. */
  check(): Promise<void>;
  stop(): void;
}

export interface ReachabilityOptions {
  /** DATABASE_URL: its host and port name the database in the log lines, never its password. */
  url: string;
  logger: Pick<Logger, 'error' | 'warn'>;
  /** What a failure reported while down is, for the recovery line, e.g. "requests answered 503". */
  failures?: string;
  /** Whether the database answers; by default a connection of its own (not the pool's: a busy pool is not an outage) and `select 1`. */
  probe?: () => Promise<void>;
  retryMs?: number;
}

/** A fresh connection and `select 1`, within `timeoutMs`. */
export function connectionProbe(url: string, timeoutMs = PROBE_TIMEOUT_MS): () => Promise<void> {
  const options = { ...connectionOptions(url), connectTimeout: timeoutMs };
  return async () => {
    const connection = await mysql.createConnection(options);
    connection.on('error', () => undefined);
    try {
      await connection.query({ sql: 'select 1', timeout: timeoutMs });
    } finally {
      connection.destroy();
    }
  };
}

/** Where the URL points: host:port. */
function target(url: string): { host: string; port: number; database: string } {
  const parsed = new URL(url);
  const port = Number(parsed.port || 3306);
  return { host: parsed.hostname, port, database: `${parsed.hostname}:${port}` };
}

/** The driver's own words for a failed connect or `select 1`: a code and a message that quotes no statement of ours. */
function causeOf(error: unknown): { code?: string; message?: string } {
  const e = error as { message?: unknown; errors?: Array<{ message?: unknown }> };
  const message =
    typeof e?.message === 'string' && e.message
      ? e.message
      : e?.errors?.map((inner) => String(inner?.message)).join('; ');
  return { code: errorCode(error), message: message || undefined };
}

/**
 * One database's reachability for one process: the first failure is confirmed by a probe, then one
 * error line says the database is unreachable (host, port, cause); probes follow every second, and
 * one line says when it answers again, how long it was gone and how many failures were reported meanwhile.
 */
export function trackReachability({
  url,
  logger,
  failures: what = 'requests answered 503',
  probe = connectionProbe(url),
  retryMs = RETRY_MS,
}: ReachabilityOptions): Reachability {
  const { host, port, database } = target(url);
  let state: 'up' | 'confirming' | 'down' = 'up';
  let since = 0;
  let count = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const wentDown = (error: unknown) => {
    state = 'down';
    logger.error(
      { database, host, port, cause: causeOf(error) },
      `database unreachable at ${database}: ${causeOf(error).code ?? 'no answer'}`,
    );
    retry();
  };
  const cameBack = () => {
    const seconds = Math.round((Date.now() - since) / 100) / 10;
    state = 'up';
    logger.warn(
      { database, host, port, downSeconds: seconds, failed: count },
      `database reachable again at ${database} after ${seconds} s; ${count} ${what} meanwhile`,
    );
    count = 0;
  };
  const retry = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      probe().then(cameBack, retry);
    }, retryMs);
    timer.unref();
  };

  return {
    failed(error) {
      if (!isDatabaseUnreachable(error)) return false;
      count += 1;
      if (state !== 'up') return true;
      state = 'confirming';
      since = Date.now();
      // A connection that died on its own (a restart long ago, an idle cut) is not an outage: the probe tells.
      probe().then(() => {
        logger.warn(
          { database, host, port, cause: causeOf(error) },
          `a database connection failed, but ${database} answers`,
        );
        state = 'up';
        count = 0;
      }, wentDown);
      return true;
    },
    isUp: () => state !== 'down',
    async check() {
      if (state !== 'up') return;
      try {
        await probe();
      } catch (error) {
        if (state !== 'up') return;
        since = Date.now();
        wentDown(error);
      }
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** trackReachability plus its gauge (`gauge`: 1 up, 0 down) in `registry`, read at each scrape after asking the database. */
export function watchDatabase(options: ReachabilityOptions & { registry?: Registry; gauge: string }): Reachability {
  const reachability = trackReachability(options);
  if (options.registry) {
    new Gauge({
      name: options.gauge,
      help: `1 while the database (${target(options.url).database}) answers, 0 while it cannot be reached`,
      registers: [options.registry],
      async collect() {
        await reachability.check();
        this.set(reachability.isUp() ? 1 : 0);
      },
    });
  }
  return reachability;
}

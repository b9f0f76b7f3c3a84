import mysql, { type PoolConnection as CoreConnection } from 'mysql2';
import type { Pool } from 'mysql2/promise';
import { CLIENT_MARGIN_MS, limitSessions } from './deadlines';
import { execute, pooled, text, type Database } from './sql';

export type { Database } from './sql';

export interface DatabaseHandle {
  db: Database;
  /** mysql2's own promise wrapper of the primary's pool: for tools and tests that send SQL of their own. */
  pool: Pool;
  /** Ends the pool; connections still busy after `timeoutMs` (a hung link) are destroyed. */
  close(timeoutMs?: number): Promise<void>;
  /** The primary pool's connections and waiters, for metrics. */
  stats(): PoolStats;
}

export interface PoolOptions {
  connectionLimit?: number;
  /** How long to wait for a TCP connection before the request is answered with 503. */
  connectTimeoutMs?: number;
  /** Told when the change feed's numbering starts a new history (service/feed-history.ts logs it). */
  onNewHistory?: Database['onNewHistory'];
  /** Per-query time limit, enforced by the server (max_statement_time / max_execution_time) and by the client a second later (mysql2's per-query timeout, db/sql.ts). */
  queryTimeoutMs?: number;
}

// TCP keep-alive probes start after this much idle time, so a dead link is noticed by the OS.
const KEEP_ALIVE_INITIAL_DELAY_MS = 10_000;
const CLOSE_TIMEOUT_MS = 1000;

/** Where a DATABASE_URL points, for messages: never the password. */
export function describeDatabaseUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '3306'}${parsed.pathname}`;
}

export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  // The name is interpolated into CREATE DATABASE, so only plain identifiers are accepted.
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) {
    throw new Error(`DATABASE_URL must name a database made of letters, digits and _ (got "${name}")`);
  }
  return name;
}

export function connectionOptions(url: string, options: PoolOptions = {}): mysql.PoolOptions {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 3306),
    user: decodeURIComponent(parsed.username || 'root'),
    password: decodeURIComponent(parsed.password),
    database: parsed.pathname.length > 1 ? databaseName(url) : undefined,
    // DATETIME columns hold UTC; mysql2 reads and writes them as UTC.
    timezone: 'Z',
    charset: 'utf8mb4_bin',
    decimalNumbers: true,
    connectionLimit: options.connectionLimit ?? 10,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    waitForConnections: true,
    queueLimit: 0,
    enableKeepAlive: true,
    keepAliveInitialDelay: KEEP_ALIVE_INITIAL_DELAY_MS,
  };
}

/** pool.end(), but a connection that does not close within `timeoutMs` is destroyed. */
async function endWithin(pool: Pool, open: Set<CoreConnection>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    pool.end().then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (!ended) for (const connection of open) connection.destroy();
}

export interface PoolStats {
  /** Connections established (one still being opened is not yet counted). */
  open: number;
  inUse: number;
  /** Callers waiting for a connection: for a free one, or for one being opened. */
  waiting: number;
}

export function createDatabase(url: string, options: PoolOptions = {}): DatabaseHandle {
  const core = mysql.createPool(connectionOptions(url, options));
  // The pool's connections as its documented events tell them: opened, handed out, given back, gone.
  const open = new Set<CoreConnection>();
  const free = new Set<CoreConnection>();
  const gone = (connection: CoreConnection) => {
    open.delete(connection);
    free.delete(connection);
  };
  core.on('connection', (connection) => {
    open.add(connection);
    // A broken idle connection must not crash the process; the pool drops it and the next request opens a new one.
    connection.on('error', () => gone(connection));
    connection.once('end', () => gone(connection));
  });
  core.on('acquire', (connection) => free.delete(connection));
  core.on('release', (connection) => free.add(connection));
  const watch = { waiting: 0, dropped: gone };

  const statementMs = options.queryTimeoutMs;
  if (statementMs) limitSessions(core, statementMs);
  const pool = core.promise();
  return {
    db: {
      ...pooled(core, statementMs ? statementMs + CLIENT_MARGIN_MS : undefined, watch),
      replicas: [],
      onNewHistory: options.onNewHistory,
    },
    pool,
    close: (timeoutMs = CLOSE_TIMEOUT_MS) => endWithin(pool, open, timeoutMs),
    stats: () => ({ open: open.size, inUse: open.size - free.size, waiting: watch.waiting }),
  };
}

/** The database with optional read replicas (DATABASE_READ_URLS). */
export function openDatabase(url: string, readUrls: readonly string[] = [], options: PoolOptions = {}): DatabaseHandle {
  const primary = createDatabase(url, options);
  if (readUrls.length === 0) return primary;
  const replicas = readUrls.map((readUrl) => createDatabase(readUrl, options));
  return {
    db: { ...primary.db, replicas: replicas.map((replica) => replica.db) },
    pool: primary.pool,
    stats: () => primary.stats(),
    close: async (...args: Parameters<DatabaseHandle['close']>) => {
      await Promise.all([primary, ...replicas].map((handle) => handle.close(...args)));
    },
  };
}

/** The readiness probe's statement: whether the database answers at all. */
export async function ping(db: Database): Promise<void> {
  await execute(db, text('select 1'));
}

import type { Socket } from 'node:net';
import { withReplicas } from 'drizzle-orm/mysql-core';
import { sql } from 'drizzle-orm';
import { drizzle, type MySql2Database } from 'drizzle-orm/mysql2';
import mysql, { type Pool } from 'mysql2/promise';
import { withDeadlines } from './deadlines';
import * as schema from './schema';

export type Database = MySql2Database<typeof schema>;

export interface DatabaseHandle {
  db: Database;
  pool: Pool;
  /** Ends the pool; connections still busy after `timeoutMs` (a hung link) are destroyed. */
  close(timeoutMs?: number): Promise<void>;
}

export interface PoolOptions {
  connectionLimit?: number;
  /** How long to wait for a TCP connection before the request is answered with 503. */
  connectTimeoutMs?: number;
  /** Per-query time limit, enforced by the server (max_statement_time / max_execution_time) and by the client a second later (db/deadlines.ts). */
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
async function endWithin(pool: Pool, sockets: Set<Socket>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    pool.end().then(() => true, () => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (!ended) for (const socket of sockets) socket.destroy();
}

export function createDatabase(url: string, options: PoolOptions = {}): DatabaseHandle {
  const raw = mysql.createPool(connectionOptions(url, options));
  const sockets = new Set<Socket>();
  // A broken idle connection must not crash the process; the pool drops it and the next request opens a new one.
  raw.on('connection', (connection) => {
    connection.on('error', () => undefined);
    const socket = (connection as unknown as { stream: Socket }).stream;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const pool = options.queryTimeoutMs ? withDeadlines(raw, options.queryTimeoutMs) : raw;
  const db = drizzle(pool, { schema, mode: 'default' });
  return { db, pool, close: (timeoutMs = CLOSE_TIMEOUT_MS) => endWithin(raw, sockets, timeoutMs) };
}

export interface PoolStats {
  open: number;
  inUse: number;
  /** Callers waiting for a connection. */
  waiting: number;
}

interface PoolInternals {
  _allConnections: { length: number };
  _freeConnections: { length: number };
  _connectionQueue: { length: number };
}

/** The pool's connections and waiters, for metrics (mysql2 keeps them only in its internal fields). */
export function poolStats(pool: Pool): PoolStats {
  const core = (pool as unknown as { pool: PoolInternals }).pool;
  const open = core._allConnections.length;
  return { open, inUse: open - core._freeConnections.length, waiting: core._connectionQueue.length };
}

/** The database with optional read replicas (DATABASE_READ_URLS). */
export function openDatabase(url: string, readUrls: readonly string[] = [], options: PoolOptions = {}): DatabaseHandle {
  const primary = createDatabase(url, options);
  if (readUrls.length === 0) return primary;
  const replicas = readUrls.map((readUrl) => createDatabase(readUrl, options));
  const [first, ...rest] = replicas.map((replica) => replica.db);
  return {
    db: withReplicas(primary.db, [first!, ...rest]),
    pool: primary.pool,
    close: async (...args: Parameters<DatabaseHandle['close']>) => {
      await Promise.all([primary, ...replicas].map((handle) => handle.close(...args)));
    },
  };
}

/** The readiness probe's statement: whether the database answers at all. */
export async function ping(db: Database): Promise<void> {
  await db.execute(sql`select 1`);
}

import { drizzle, type MySql2Database } from 'drizzle-orm/mysql2';
import mysql, { type Pool } from 'mysql2/promise';
import * as schema from './schema';

export type Database = MySql2Database<typeof schema>;

export interface DatabaseHandle {
  db: Database;
  pool: Pool;
  close(): Promise<void>;
}

export interface PoolOptions {
  connectionLimit?: number;
  /** How long to wait for a TCP connection before the request is answered with 503. */
  connectTimeoutMs?: number;
}

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
  };
}

export function createDatabase(url: string, options: PoolOptions = {}): DatabaseHandle {
  const pool = mysql.createPool(connectionOptions(url, options));
  // A broken idle connection must not crash the process; the pool drops it and the next
  // request opens a new one.
  pool.on('connection', (connection) => {
    connection.on('error', () => undefined);
  });
  const db = drizzle(pool, { schema, mode: 'default' });
  return { db, pool, close: () => pool.end() };
}

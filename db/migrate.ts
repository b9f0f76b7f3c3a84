import { createHash } from 'node:crypto';
import path from 'node:path';
import { migrate } from 'drizzle-orm/mysql2/migrator';
import mysql from 'mysql2/promise';
import { errorCode, isDatabaseUnavailable } from './errors';
import { connectionOptions, createDatabase, databaseName, describeDatabaseUrl, type DatabaseHandle } from './client';

// Works from db/ (ts-jest) and from dist/db/ (compiled).
export const MIGRATIONS_FOLDER = path.resolve(
  __dirname,
  __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../db/migrations' : 'migrations',
);

/** How long an instance waits for another one's migration before giving up (MIGRATION_LOCK_TIMEOUT_SECONDS). */
export const DEFAULT_MIGRATION_LOCK_TIMEOUT_SECONDS = 60;

export interface MigrateOptions {
  /** Seconds to wait for the migration lock; default DEFAULT_MIGRATION_LOCK_TIMEOUT_SECONDS. */
  lockTimeoutSeconds?: number;
  /** Start-up work that must also run once however many instances start together (seeding an empty table). */
  underLock?(handle: DatabaseHandle): Promise<void>;
}

/** The GET_LOCK name that serialises migrations. */
export function migrationLockName(database: string): string {
  const name = `jobs-migrate:${database}`;
  return name.length <= 64 ? name : `jobs-migrate:${createHash('sha256').update(database).digest('hex').slice(0, 51)}`;
}

export class MigrationLockTimeout extends Error {}

function serverConnection(url: string): Promise<mysql.Connection> {
  const { database: _omit, connectionLimit: _a, waitForConnections: _b, queueLimit: _c, ...serverOptions } = connectionOptions(url);
  return mysql.createConnection(serverOptions);
}

async function createDatabaseIfMissing(connection: mysql.Connection, name: string): Promise<void> {
  await connection.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
}

/** Creates the database if needed and applies every committed migration not applied yet. */
export async function migrateDatabase(url: string, options: MigrateOptions = {}): Promise<void> {
  const name = databaseName(url);
  const timeout = options.lockTimeoutSeconds ?? DEFAULT_MIGRATION_LOCK_TIMEOUT_SECONDS;
  const lock = migrationLockName(name);
  const connection = await serverConnection(url);
  try {
    await createDatabaseIfMissing(connection, name);
    const [[row]] = await connection.query<mysql.RowDataPacket[]>('SELECT GET_LOCK(?, ?) AS acquired', [lock, timeout]);
    if (Number(row?.acquired) !== 1) {
      throw new MigrationLockTimeout(
        `another instance held the migration lock for more than ${timeout} s (MIGRATION_LOCK_TIMEOUT_SECONDS)`,
      );
    }
    const handle = createDatabase(url, { connectionLimit: 1 });
    try {
      await migrate(handle.db, { migrationsFolder: MIGRATIONS_FOLDER });
      await options.underLock?.(handle);
    } finally {
      await handle.close();
      await connection.query('SELECT RELEASE_LOCK(?)', [lock]).catch(() => undefined);
    }
  } finally {
    await connection.end().catch(() => undefined);
  }
}

/** One line for the operator when start-up cannot use the database. */
export function startupDatabaseError(url: string, error: unknown): string {
  const code = errorCode(error);
  const where = describeDatabaseUrl(url);
  if (code === 'ER_ACCESS_DENIED_ERROR') {
    return `MySQL at ${where} refused the credentials in DATABASE_URL (${code}).`;
  }
  if (isDatabaseUnavailable(error)) {
    return `Cannot reach MySQL at ${where} (${code}). Is it running? Set DATABASE_URL to point elsewhere.`;
  }
  return `Database set-up failed at ${where}: ${code ?? (error instanceof Error ? error.message : String(error))}`;
}

import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/mysql2';
import { migrate } from 'drizzle-orm/mysql2/migrator';
import mysql from 'mysql2/promise';
import { errorCode, isDatabaseUnavailable } from './errors';
import { migrationRefusal, readJournal, type JournalEntry } from './migration-safety';
import { ensureDigests } from './jobs/mirror-digests';
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

/** db/migrations holds a migration the migrator refuses (db/migration-safety.ts); its message is the operator's one line. */
export class MigrationRefused extends Error {}

/** The migrations this release knows, oldest first. */
export function knownMigrations(folder = MIGRATIONS_FOLDER): JournalEntry[] {
  return readJournal(folder).entries.map(({ tag, when }) => ({ tag, when }));
}

/** What a start-up's migration did, for the caller to log. */
export interface MigrationReport {
  /** Each migration this start applied, in order, with how long it took. */
  applied: Array<{ name: string; durationMs: number }>;
  /** Set when the database holds a migration newer than any this release knows: the newest it knows. */
  newestKnownBehind?: string;
}

/** When the newest migration applied to the database was written (drizzle's created_at), or undefined for none. */
async function lastApplied(connection: mysql.Connection, database: string): Promise<number | undefined> {
  const [tables] = await connection.query<mysql.RowDataPacket[]>(
    "SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = '__drizzle_migrations'",
    [database],
  );
  if (tables.length === 0) return undefined;
  const [[row]] = await connection.query<mysql.RowDataPacket[]>(
    `SELECT MAX(created_at) AS last FROM \`${database}\`.__drizzle_migrations`,
  );
  return row?.last === null || row?.last === undefined ? undefined : Number(row.last);
}

/**
 * Applies the pending migrations one at a time, each through drizzle's migrate() on a journal that
 * ends with it (a folder of links to db/migrations), so each is timed on its own.
 */
async function applyTimed(
  handle: DatabaseHandle,
  pending: JournalEntry[],
  known: JournalEntry[],
): Promise<MigrationReport['applied']> {
  const applied: MigrationReport['applied'] = [];
  if (pending.length === 0) return applied;
  const folder = mkdtempSync(path.join(os.tmpdir(), 'jobs-migrations-'));
  try {
    mkdirSync(path.join(folder, 'meta'));
    for (const { tag } of known)
      symlinkSync(path.join(MIGRATIONS_FOLDER, `${tag}.sql`), path.join(folder, `${tag}.sql`));
    const journal = readJournal(MIGRATIONS_FOLDER);
    for (const migration of pending) {
      const upTo = journal.entries.findIndex((entry) => entry.tag === migration.tag) + 1;
      writeFileSync(
        path.join(folder, 'meta', '_journal.json'),
        JSON.stringify({ ...journal, entries: journal.entries.slice(0, upTo) }),
      );
      const started = performance.now();
      await migrate(drizzle(handle.pool), { migrationsFolder: folder });
      applied.push({ name: migration.tag, durationMs: Math.round(performance.now() - started) });
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  return applied;
}

function serverConnection(url: string): Promise<mysql.Connection> {
  const {
    database: _omit,
    connectionLimit: _a,
    waitForConnections: _b,
    queueLimit: _c,
    ...serverOptions
  } = connectionOptions(url);
  return mysql.createConnection(serverOptions);
}

async function createDatabaseIfMissing(connection: mysql.Connection, name: string): Promise<void> {
  await connection.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
}

/**
 * Creates the database if needed and applies every committed migration not applied yet, one at a
 * time. Says which it applied, and whether the database is ahead of this release. Throws
 * MigrationRefused, before it connects, when db/migrations holds a migration it must not apply.
 */
export async function migrateDatabase(url: string, options: MigrateOptions = {}): Promise<MigrationReport> {
  const refusal = migrationRefusal(MIGRATIONS_FOLDER);
  if (refusal !== undefined) throw new MigrationRefused(refusal);
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
      const known = knownMigrations();
      const last = await lastApplied(connection, name);
      const newest = known.at(-1)!;
      const report: MigrationReport = { applied: [] };
      if (last !== undefined && last > newest.when) report.newestKnownBehind = newest.tag;
      else
        report.applied = await applyTimed(
          handle,
          known.filter((m) => last === undefined || m.when > last),
          known,
        );
      // The mirror check's digests, the first time their tables exist (a release that adds them, a restored older dump).
      if (!report.newestKnownBehind) await ensureDigests(handle.db);
      await options.underLock?.(handle);
      return report;
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
  if (error instanceof MigrationRefused) return error.message;
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

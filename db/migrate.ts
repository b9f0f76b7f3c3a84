import path from 'node:path';
import { migrate } from 'drizzle-orm/mysql2/migrator';
import mysql from 'mysql2/promise';
import { errorCode, isDatabaseUnavailable } from './errors';
import { connectionOptions, createDatabase, databaseName, describeDatabaseUrl } from './client';

// Works from db/ (ts-jest) and from dist/db/ (compiled): both sit one or two levels below the
// repository root, and the committed SQL lives in <root>/db/migrations.
export const MIGRATIONS_FOLDER = path.resolve(
  __dirname,
  __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../db/migrations' : 'migrations',
);

/** Creates the database named in the URL when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const { database: _omit, ...serverOptions } = connectionOptions(url);
  const connection = await mysql.createConnection(serverOptions);
  try {
    await connection.query(
      `CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
    );
  } finally {
    await connection.end();
  }
}

/** Creates the database if needed and applies every committed migration not applied yet. */
export async function migrateDatabase(url: string): Promise<void> {
  await ensureDatabase(url);
  const handle = createDatabase(url, { connectionLimit: 1 });
  try {
    await migrate(handle.db, { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await handle.close();
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

if (require.main === module) {
  // Imported here so the library part of this module does not depend on the service.
  const { loadConfig } = require('../service/config') as typeof import('../service/config');
  const url = loadConfig().databaseUrl;
  migrateDatabase(url).then(
    () => console.log(`Migrated ${describeDatabaseUrl(url)}`),
    (error: unknown) => {
      console.error(startupDatabaseError(url, error));
      process.exit(1);
    },
  );
}

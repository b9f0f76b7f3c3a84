import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { createDatabase, type DatabaseHandle, type PoolOptions } from '../../db/client';
import { migrateDatabase } from '../../db/migrate';
import { testServerOptions, testServerUrl } from './server';

// One id per `npm test` run (set by test/helpers/global-setup.ts, inherited by every worker), so
// two runs on one MariaDB never share a database; the worker id keeps a run's files apart.
const RUN_ID = process.env.TEST_RUN_ID ?? randomBytes(4).toString('hex');
const WORKER = process.env.JEST_WORKER_ID ?? '0';

/** Every database this run creates starts with this, so global-teardown.ts can drop leftovers. */
export function runDatabasePrefix(runId: string = RUN_ID): string {
  return `jt_${runId}_`;
}

export interface TestDatabase extends DatabaseHandle {
  url: string;
  name: string;
  /** Runs raw SQL for arrange/assert steps the API cannot do (soft-deleting, counting). */
  query<T = mysql.RowDataPacket[]>(statement: string, values?: unknown[]): Promise<T>;
  /** Ends the pool and drops the database. */
  close(): Promise<void>;
}

async function dropDatabase(name: string): Promise<void> {
  const admin = await mysql.createConnection(testServerOptions());
  try {
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await admin.end();
  }
}

/**
 * A new, migrated database `jt_<run>_<worker>_<name>` on the test server (TEST_DATABASE_URL),
 * with a pool on it; close() drops it again.
 */
export async function freshDatabase(name: string, options: PoolOptions = {}): Promise<TestDatabase> {
  const databaseName = `${runDatabasePrefix()}${WORKER}_${name}`.slice(0, 64);
  const url = `${testServerUrl()}/${databaseName}`;
  await dropDatabase(databaseName);
  await migrateDatabase(url);
  const handle = createDatabase(url, options);
  return {
    ...handle,
    url,
    name: databaseName,
    async query<T>(statement: string, values?: unknown[]) {
      const [rows] = await handle.pool.query(statement, values);
      return rows as T;
    },
    async close() {
      await handle.close();
      await dropDatabase(databaseName);
    },
  };
}

/** Every row of jobs, drafts and soft-deleted ones too: what a refused request must leave as it was. */
export async function jobRowCount(database: Pick<TestDatabase, 'query'>): Promise<number> {
  const [row] = await database.query<Array<{ n: number }>>('select count(*) as n from jobs');
  return Number(row!.n);
}

import mysql from 'mysql2/promise';
import { connectionOptions, createDatabase, type DatabaseHandle } from '../../db/client';
import { migrateDatabase } from '../../db/migrate';

// The server the tests use; each test file gets its own database on it.
const SERVER_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';

export interface TestDatabase extends DatabaseHandle {
  url: string;
  name: string;
  /** Runs raw SQL for arrange/assert steps the API cannot do (soft-deleting, counting). */
  query<T = mysql.RowDataPacket[]>(statement: string, values?: unknown[]): Promise<T>;
}

/** Drops and recreates `jobs_test_<name>`, applies the migrations, returns a pool on it. */
export async function freshDatabase(name: string): Promise<TestDatabase> {
  const databaseName = `jobs_test_${name}`;
  const url = `${SERVER_URL}/${databaseName}`;
  const { database: _none, ...serverOptions } = connectionOptions(url);
  const admin = await mysql.createConnection(serverOptions);
  await admin.query(`DROP DATABASE IF EXISTS \`${databaseName}\``);
  await admin.end();
  await migrateDatabase(url);
  const handle = createDatabase(url);
  return {
    ...handle,
    url,
    name: databaseName,
    async query<T>(statement: string, values?: unknown[]) {
      const [rows] = await handle.pool.query(statement, values);
      return rows as T;
    },
  };
}

import mysql from 'mysql2/promise';
import { testServerOptions } from './server';

/** Drops whatever this run's tests left behind (a crashed file, a database a test re-created). */
export default async function globalTeardown(): Promise<void> {
  const runId = process.env.TEST_RUN_ID;
  if (!runId) return;
  const admin = await mysql.createConnection(testServerOptions());
  try {
    const [rows] = await admin.query<mysql.RowDataPacket[]>(
      'SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name LIKE ?',
      [`jt\\_${runId}\\_%`],
    );
    for (const { name } of rows) await admin.query(`DROP DATABASE IF EXISTS \`${name as string}\``);
  } finally {
    await admin.end();
  }
}

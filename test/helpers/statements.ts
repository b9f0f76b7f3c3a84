import { drizzle } from 'drizzle-orm/mysql2';
import type { RowDataPacket } from 'mysql2';
import type { Pool, PoolConnection } from 'mysql2/promise';
import type { Database } from '../../db/client';
import * as schema from '../../db/schema';
import type { Statement } from '../../db/sql';

/**
 * A database on `pool` that records each statement the service's code sends, whether drizzle runs
 * it or db/sql.ts's driverRows does, so a test reads the plan of exactly what runs. `take()` hands
 * over what was recorded since the last call.
 */
export function recordingDatabase(pool: Pool): { db: Database; take(): Statement[] } {
  let recorded: Statement[] = [];
  const recordingPool = Object.assign(Object.create(pool) as Pool, {
    query: (options: string | { sql: string }, params?: unknown[]) => {
      recorded.push({ sql: typeof options === 'string' ? options : options.sql, params: params ?? [] });
      return pool.query(options as never, params);
    },
  });
  const db = drizzle(recordingPool, { schema, mode: 'default' });
  return {
    db,
    take() {
      const taken = recorded;
      recorded = [];
      return taken;
    },
  };
}

/** The statement of `statements` that reads a listing page (its ids, then their rows), if one ran. */
export const pageRead = (statements: Statement[]) => statements.find((one) => one.sql.includes('`page_ids`'));
/** The statement of `statements` that reads a listing's total from job_counts. */
export const totalRead = (statements: Statement[]) => statements.find((one) => one.sql.includes('from `job_counts`'));

/** The storage engine's read handlers, counted by rowsRead(); `withKeyLookups` adds Handler_read_key. */
const READ_HANDLERS = [
  'Handler_read_next',
  'Handler_read_prev',
  'Handler_read_rnd_next',
  'Handler_read_first',
  'Handler_read_last',
];

/** Runs `run` on one connection of `pool` and adds up the read handlers it moved. */
async function readsDuring<T>(
  pool: Pool,
  handlers: string[],
  run: (connection: PoolConnection) => Promise<T>,
): Promise<{ result: T; rows: number }> {
  const connection = await pool.getConnection();
  try {
    await connection.query('FLUSH STATUS');
    const result = await run(connection);
    const [rows] = await connection.query<RowDataPacket[]>('SHOW SESSION STATUS WHERE Variable_name IN (?)', [
      handlers,
    ]);
    return { result, rows: rows.reduce((sum, row) => sum + Number(row.Value), 0) };
  } finally {
    connection.release();
  }
}

/** Rows the storage engine handed over (index and table reads) for one run of `statement` on `pool`. */
export async function rowsRead(
  pool: Pool,
  { sql, params }: Statement,
  { withKeyLookups = false } = {},
): Promise<number> {
  const handlers = withKeyLookups ? ['Handler_read_key', ...READ_HANDLERS] : READ_HANDLERS;
  return (await readsDuring(pool, handlers, (connection) => connection.query(sql, params))).rows;
}

/** Rows the storage engine handed over for everything `work` sends, on one connection of `pool`: a function of db/ with several statements. */
export function rowsReadBy<T>(pool: Pool, work: (db: Database) => Promise<T>): Promise<{ result: T; rows: number }> {
  return readsDuring(pool, READ_HANDLERS, (connection) => work(drizzle(connection, { schema, mode: 'default' })));
}

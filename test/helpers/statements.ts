import { AsyncLocalStorage } from 'node:async_hooks';
import { tracingChannel } from 'node:diagnostics_channel';
import type { RowDataPacket } from 'mysql2';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { createDatabase, type Database } from '../../db/client';
import type { Statement } from '../../db/sql';

/** What mysql2 publishes on its documented 'mysql2:query' tracing channel as a statement starts (its typings' QueryTraceContext). */
interface QueryTrace {
  query: string;
  database: string;
}

/** The statement lists being recorded: by database name, and by the async context of statementsOf's work. */
const byDatabase = new Map<string, Statement[]>();
const byWork = new AsyncLocalStorage<Statement[]>();
const ignore = () => undefined;
tracingChannel<QueryTrace>('mysql2:query').subscribe({
  start: ({ query, database }) => {
    // The text as sent, values written in by mysql2.
    const statement = { sql: query, params: [] };
    byDatabase.get(database)?.push(statement);
    byWork.getStore()?.push(statement);
  },
  end: ignore,
  asyncStart: ignore,
  asyncEnd: ignore,
  error: ignore,
});

/**
 * Records every statement sent to the database named `database` by any pool of this process (a
 * service's, behind HTTP): `take()` hands over what was recorded since the last call.
 */
export function recordStatements(database: string): { take(): Statement[]; stop(): void } {
  byDatabase.set(database, []);
  return {
    take() {
      const taken = byDatabase.get(database) ?? [];
      byDatabase.set(database, []);
      return taken;
    },
    stop: () => byDatabase.delete(database),
  };
}

/** What `work` returns and the statements it sent, in order: only its own, whatever else runs at the same time. */
export async function statementsOf<T>(work: () => Promise<T>): Promise<{ result: T; statements: Statement[] }> {
  const statements: Statement[] = [];
  const result = await byWork.run(statements, work);
  return { result, statements };
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

/** Rows the storage engine handed over for everything `work` sends: a function of db/ with several statements, on a pool of one connection to `url`. */
export async function rowsReadBy<T>(
  url: string,
  work: (db: Database) => Promise<T>,
): Promise<{ result: T; rows: number }> {
  const single = createDatabase(url, { connectionLimit: 1 });
  try {
    await single.pool.query('FLUSH STATUS');
    const result = await work(single.db);
    const [rows] = await single.pool.query<RowDataPacket[]>('SHOW SESSION STATUS WHERE Variable_name IN (?)', [
      READ_HANDLERS,
    ]);
    return { result, rows: rows.reduce((sum, row) => sum + Number(row.Value), 0) };
  } finally {
    await single.close();
  }
}

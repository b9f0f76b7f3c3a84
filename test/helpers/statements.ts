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

/**
 * Records every statement sent to the database named `database`, by any pool of this process, as
 * mysql2 traces it (the text with its values written in): what exactly runs, whoever sends it.
 * `take()` hands over what was recorded since the last call; `stop()` ends the recording.
 */
export function recordStatements(database: string): { take(): Statement[]; stop(): void } {
  let recorded: Statement[] = [];
  const channel = tracingChannel<QueryTrace>('mysql2:query');
  const ignore = () => undefined;
  const handlers = {
    start: (trace: QueryTrace) => {
      if (trace.database === database) recorded.push({ sql: trace.query, params: [] });
    },
    end: ignore,
    asyncStart: ignore,
    asyncEnd: ignore,
    error: ignore,
  };
  channel.subscribe(handlers);
  return {
    take() {
      const taken = recorded;
      recorded = [];
      return taken;
    },
    stop: () => channel.unsubscribe(handlers),
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

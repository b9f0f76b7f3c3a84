import { drizzle } from 'drizzle-orm/mysql2';
import type { RowDataPacket } from 'mysql2';
import type { Pool } from 'mysql2/promise';
import type { Database } from '../../db/client';
import * as schema from '../../db/schema';
import type { Statement } from '../../db/sql';

/**
 * A database on `pool` whose drizzle logger records each statement the service's code sends, so
 * a test reads the plan of exactly what runs. `take()` hands over what was recorded since the last call.
 */
export function recordingDatabase(pool: Pool): { db: Database; take(): Statement[] } {
  let recorded: Statement[] = [];
  const db = drizzle(pool, { schema, mode: 'default', logger: { logQuery: (sql, params) => recorded.push({ sql, params }) } });
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
const READ_HANDLERS = ['Handler_read_next', 'Handler_read_prev', 'Handler_read_rnd_next', 'Handler_read_first', 'Handler_read_last'];

/** Rows the storage engine handed over (index and table reads) for one run of `statement` on `pool`. */
export async function rowsRead(pool: Pool, { sql, params }: Statement, { withKeyLookups = false } = {}): Promise<number> {
  const handlers = withKeyLookups ? ['Handler_read_key', ...READ_HANDLERS] : READ_HANDLERS;
  const connection = await pool.getConnection();
  try {
    await connection.query('FLUSH STATUS');
    await connection.query(sql, params);
    const [rows] = await connection.query<RowDataPacket[]>('SHOW SESSION STATUS WHERE Variable_name IN (?)', [handlers]);
    return rows.reduce((sum, row) => sum + Number(row.Value), 0);
  } finally {
    connection.release();
  }
}

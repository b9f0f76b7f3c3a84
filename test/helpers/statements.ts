import { drizzle } from 'drizzle-orm/mysql2';
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

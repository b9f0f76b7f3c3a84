import { count, isNull } from 'drizzle-orm';
import { jobChanges } from '../schema';
import { select, type Database } from '../sql';

/** Committed job changes the feed has not numbered yet (its backlog, for metrics). */
export async function pendingChangeCount(db: Database): Promise<number> {
  const [row] = await select(db, { pending: count() }, (query) => query.from(jobChanges).where(isNull(jobChanges.seq)));
  return row?.pending ?? 0;
}

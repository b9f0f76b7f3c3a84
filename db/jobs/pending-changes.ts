import { count, isNull } from 'drizzle-orm';
import type { Database } from '../client';
import { jobChanges } from '../schema';

/** Committed job changes the feed has not numbered yet (its backlog, for metrics). */
export async function pendingChangeCount(db: Database): Promise<number> {
  const [row] = await db.select({ pending: count() }).from(jobChanges).where(isNull(jobChanges.seq));
  return row?.pending ?? 0;
}

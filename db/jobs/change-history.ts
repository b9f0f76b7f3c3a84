import { randomBytes } from 'node:crypto';
import { asc, desc, eq, sql } from 'drizzle-orm';
import type { Database } from '../client';
import { jobChangeHistories, jobChangeSequence } from '../schema';
import type { History } from '../../domain/feed';

/** The feed's lineage, in minting order (domain/feed.ts): a handful of rows, one more per restore. */
export async function readLineage(db: Database): Promise<History[]> {
  return db
    .select({ id: jobChangeHistories.history, firstSeq: jobChangeHistories.firstSeq })
    .from(jobChangeHistories)
    .orderBy(asc(jobChangeHistories.id));
}

/** When this table was created, as the server says: a restore from a dump recreates it. */
async function tableCreated(db: Database): Promise<string> {
  const [rows] = (await db.execute(
    sql`select coalesce(cast(create_time as char), '') as created from information_schema.tables where table_schema = database() and table_name = 'job_change_histories'`,
  )) as unknown as [Array<{ created: string }>];
  return rows[0]?.created ?? '';
}

/** A new history whose numbers start after `lastSeq`: positions past `lastSeq` in the older ones are no longer held. */
export async function mintHistory(db: Database, lastSeq: number): Promise<string> {
  const history = randomBytes(8).toString('hex');
  await db.insert(jobChangeHistories).values({ history, firstSeq: lastSeq + 1, tableCreated: await tableCreated(db) });
  return history;
}

/**
 * Before numbering after `lastSeq`, in the sequencer's locked transaction: a new history when the
 * table was recreated since the current one was minted (a restore), so no number is given twice in one history.
 * Returns the new history's id, if one was minted.
 */
export async function ensureHistory(tx: Database, lastSeq: number): Promise<string | undefined> {
  const [current] = await tx
    .select({ tableCreated: jobChangeHistories.tableCreated })
    .from(jobChangeHistories)
    .orderBy(desc(jobChangeHistories.id))
    .limit(1);
  if (current && current.tableCreated === (await tableCreated(tx))) return undefined;
  return mintHistory(tx, lastSeq);
}

/** A new history now, under the sequencer's lock: for a restore the table's creation time cannot tell (a physical backup, a failover). */
export async function startNewHistory(db: Database): Promise<History> {
  return db.transaction(async (tx) => {
    const [counter] = await tx
      .select({ lastSeq: jobChangeSequence.lastSeq })
      .from(jobChangeSequence)
      .where(eq(jobChangeSequence.id, 1))
      .for('update');
    if (!counter) throw new Error('job_change_sequence has no row: run the migrations');
    return { id: await mintHistory(tx, counter.lastSeq), firstSeq: counter.lastSeq + 1 };
  });
}

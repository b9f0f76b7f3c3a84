import { randomBytes } from 'node:crypto';
import { asc, desc, eq } from 'drizzle-orm';
import { jobChangeHistories, jobChangeSequence } from '../schema';
import { execute, qb, select, transaction, type Database, type Queryable } from '../sql';
import { FIRST_HISTORY, type History } from '../../domain/feed';
import { tableCreated } from './table-created';

/** The feed's lineage, in minting order (domain/feed.ts): a handful of rows, one more per restore. */
export function readLineage(db: Queryable): Promise<History[]> {
  return select(db, { id: jobChangeHistories.history, firstSeq: jobChangeHistories.firstSeq }, (query) =>
    query.from(jobChangeHistories).orderBy(asc(jobChangeHistories.id)),
  );
}

/** A new history whose numbers start after `lastSeq`: positions past `lastSeq` in the older ones are no longer held. */
export async function mintHistory(db: Queryable, lastSeq: number): Promise<string> {
  const history = randomBytes(8).toString('hex');
  const { created } = await tableCreated(db, jobChangeHistories);
  await execute(db, qb.insert(jobChangeHistories).values({ history, firstSeq: lastSeq + 1, tableCreated: created }));
  return history;
}

/**
 * Before numbering after `lastSeq`, in the sequencer's locked transaction: a new history when the
 * table was recreated since the current one was minted (a restore), so no number is given twice in one history.
 * Returns the new history's id, if one was minted.
 */
export async function ensureHistory(tx: Queryable, lastSeq: number): Promise<string | undefined> {
  const [current] = await select(tx, { tableCreated: jobChangeHistories.tableCreated }, (query) =>
    query.from(jobChangeHistories).orderBy(desc(jobChangeHistories.id)).limit(1),
  );
  if (current && current.tableCreated === (await tableCreated(tx, jobChangeHistories)).created) return undefined;
  return mintHistory(tx, lastSeq);
}

/** The lineage's newest history: the one a new subscription is made in, and every subscription is told of. */
export async function newestHistory(db: Queryable): Promise<string> {
  const [row] = await select(db, { history: jobChangeHistories.history }, (query) =>
    query.from(jobChangeHistories).orderBy(desc(jobChangeHistories.id)).limit(1),
  );
  return row?.history ?? FIRST_HISTORY;
}

/** A history of the lineage by its id; undefined once a restore removed it. */
export async function findHistory(db: Queryable, history: string): Promise<History | undefined> {
  const [row] = await select(db, { id: jobChangeHistories.history, firstSeq: jobChangeHistories.firstSeq }, (query) =>
    query.from(jobChangeHistories).where(eq(jobChangeHistories.history, history)),
  );
  return row;
}

/** Whether this table was recreated at least 2 s ago: a dump still loading has it, but maybe not yet the sequencer's counter after it. */
async function recreatedAndSettled(db: Queryable, minted: string | undefined): Promise<boolean> {
  const { created, settled } = await tableCreated(db, jobChangeHistories);
  return created !== minted && settled;
}

/**
 * A restore seen without waiting for a change (the dispatcher asks every second): a new history once the
 * table was recreated, minted under the sequencer's lock as numbering mints it, and told as it is.
 */
export async function noticeRestore(db: Database): Promise<History | undefined> {
  const [current] = await select(db, { tableCreated: jobChangeHistories.tableCreated }, (query) =>
    query.from(jobChangeHistories).orderBy(desc(jobChangeHistories.id)).limit(1),
  );
  if (!(await recreatedAndSettled(db, current?.tableCreated))) return undefined;
  const minted = await transaction(db, async (tx) => {
    const { lastSeq } = await lockSequencer(tx);
    const history = await ensureHistory(tx, lastSeq);
    return history === undefined ? undefined : { id: history, firstSeq: lastSeq + 1 };
  });
  if (minted) db.onNewHistory?.({ history: minted.id, firstSeq: minted.firstSeq });
  return minted;
}

/** The sequencer's counter, locked: no number is given, no digest kept, while its holder works. */
export async function lockSequencer(tx: Queryable): Promise<{ lastSeq: number; digestsThrough: number }> {
  const [counter] = await select(
    tx,
    { lastSeq: jobChangeSequence.lastSeq, digestsThrough: jobChangeSequence.digestsThrough },
    (query) => query.from(jobChangeSequence).where(eq(jobChangeSequence.id, 1)).for('update'),
  );
  if (!counter) throw new Error('job_change_sequence has no row: run the migrations');
  return counter;
}

/** A new history now, under the sequencer's lock: for a restore the table's creation time cannot tell (a physical backup, a failover). */
export async function startNewHistory(db: Database): Promise<History> {
  return transaction(db, async (tx) => {
    const { lastSeq } = await lockSequencer(tx);
    return { id: await mintHistory(tx, lastSeq), firstSeq: lastSeq + 1 };
  });
}

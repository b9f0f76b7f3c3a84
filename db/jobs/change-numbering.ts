import { eq, isNull, sql } from 'drizzle-orm';
import { jobChangeSequence, jobChanges } from '../schema';
import { execute, prepare, qb, query, select, transaction, type Database } from '../sql';
import { ensureHistory, lockSequencer } from './change-history';
import { catchUpDigests, refreshDigests } from './mirror-digests';

/** Rows numbered per statement, and statements per call: a bulk import is numbered over a few feed requests. */
export const SEQUENCER_LIMITS = { batch: 500, batchesPerCall: 10 };

const WAITING = prepare({ jobId: jobChanges.jobId }, (select) =>
  select.from(jobChanges).where(isNull(jobChanges.seq)).limit(1),
);
const LAST = prepare(
  { lastSeq: jobChangeSequence.lastSeq, digestsThrough: jobChangeSequence.digestsThrough },
  (select) => select.from(jobChangeSequence).where(eq(jobChangeSequence.id, 1)),
);

/** Numbers the committed changes that have no number yet, after every number already given. */
export async function sequencePendingChanges(db: Database, limits = SEQUENCER_LIMITS): Promise<boolean> {
  // Nothing committed and waiting: no write transaction at all (the common case for a poll).
  const [waiting] = await query(db, WAITING);
  if (!waiting) return false;
  return numberChanges(db, limits);
}

/** Digests for what an older release numbered (it does not keep them), then whatever is waiting: housekeeping's, off the request path. */
export async function keepDigestsCaughtUp(db: Database): Promise<void> {
  const [counter] = await query(db, LAST);
  if (counter && counter.digestsThrough < counter.lastSeq) while (await numberChanges(db, SEQUENCER_LIMITS));
}

async function numberChanges(db: Database, limits: typeof SEQUENCER_LIMITS): Promise<boolean> {
  let minted: { history: string; firstSeq: number } | undefined;
  const more = await transaction(
    db,
    async (tx) => {
      const counter = await lockSequencer(tx);
      let last = counter.lastSeq;
      // After a restore, the numbers from here on are a new history: never a number given twice in one.
      const history = await ensureHistory(tx, last);
      if (history) minted = { history, firstSeq: last + 1 };
      // Numbers an older release gave without digests are caught up first: the digests stay exact at one position.
      const through = await catchUpDigests(tx, counter.digestsThrough, last, limits.batch * limits.batchesPerCall);
      if (through < last) {
        await execute(
          tx,
          qb.update(jobChangeSequence).set({ digestsThrough: through }).where(eq(jobChangeSequence.id, 1)),
        );
        return true;
      }
      let more = false;
      for (let batch = 0; ; batch++) {
        if (batch === limits.batchesPerCall) {
          more = true;
          break;
        }
        const pending = await select(tx, { jobId: jobChanges.jobId }, (query) =>
          query
            .from(jobChanges)
            .where(isNull(jobChanges.seq))
            .orderBy(jobChanges.changedAt, jobChanges.jobId)
            .limit(limits.batch)
            .for('update', { skipLocked: true }),
        );
        if (pending.length === 0) break;
        // Rows this transaction has locked, so the upsert only ever updates them.
        await execute(
          tx,
          qb
            .insert(jobChanges)
            .values(pending.map(({ jobId }, i) => ({ jobId, seq: last + i + 1 })))
            .onDuplicateKeyUpdate({ set: { seq: sql`values(${jobChanges.seq})` } }),
        );
        // The mirror check's digests move with the numbers, in this transaction: any snapshot sees both or neither.
        await refreshDigests(
          tx,
          pending.map(({ jobId }) => jobId),
        );
        last += pending.length;
        if (pending.length < limits.batch) break;
      }
      await execute(
        tx,
        qb.update(jobChangeSequence).set({ lastSeq: last, digestsThrough: last }).where(eq(jobChangeSequence.id, 1)),
      );
      return more;
    },
    'read committed',
  );
  if (minted) db.onNewHistory?.(minted);
  return more;
}

/** The highest number given out so far: a position no reader can legitimately be beyond. */
export async function lastSequenced(db: Database): Promise<number> {
  const [counter] = await query(db, LAST);
  return counter?.lastSeq ?? 0;
}

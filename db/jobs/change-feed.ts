import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Database } from '../client';
import { jobChanges, jobs } from '../schema';
import { primaryOf } from '../sql';
import { lastSequenced, sequencePendingChanges } from './change-numbering';
import type { Job, Tombstone } from '../../domain/job';
import { publicColumns, toJob } from './job-columns';

export interface ChangePage {
  entries: Array<Job | Tombstone>;
  /** Number of the last entry read (the position to continue after). */
  lastSeq: number | undefined;
  hasMore: boolean;
}

/** The query behind a feed page: changes after `since` in number order, each with its job's current public fields. */
function changesQuery(db: Database, since: number, limit: number) {
  return db
    .select({
      seq: jobChanges.seq,
      jobId: jobChanges.jobId,
      // Listable now: not soft-deleted (visible_status is NULL then), not a draft, not deleted.
      listable: sql`coalesce(${jobs.visibleStatus} <> 'draft', false)`.mapWith(Boolean),
      job: publicColumns,
    })
    .from(jobChanges)
    .leftJoin(jobs, eq(jobs.id, jobChanges.jobId))
    .where(and(eq(jobChanges.everPublic, true), gt(jobChanges.seq, since)))
    .orderBy(asc(jobChanges.seq))
    .limit(limit + 1);
}

/** One page of the feed: the job as it is now when listable, else a tombstone. */
export async function readChanges(db: Database, since: number, limit: number): Promise<ChangePage> {
  const rows = await changesQuery(db, since, limit);
  const page = rows.slice(0, limit);
  return {
    entries: page.map(({ jobId, listable, job }) => (listable && job ? toJob(job) : { id: jobId, removed: true })),
    lastSeq: page.at(-1)?.seq ?? undefined,
    hasMore: rows.length > limit,
  };
}

/** A feed page as a poll reads it: the changes after `since`, or word that `since` is ahead of the feed. */
export type FeedPage = ChangePage | { ahead: true };

/** A poll of the feed, on the primary (its positions must never go backwards between two polls). */
export async function pollFeed(db: Database, since: number, limit: number): Promise<FeedPage> {
  const primary = primaryOf(db);
  const stillNumbering = await sequencePendingChanges(primary);
  const page = await readChanges(primary, since, limit);
  if (page.entries.length === 0 && since > (await lastSequenced(primary))) return { ahead: true };
  return { ...page, hasMore: page.hasMore || stillNumbering };
}

/** A feed entry with its position and when its change was written: what a webhook event is made of. */
export interface ChangeEvent {
  seq: number;
  changedAt: Date;
  entry: Job | Tombstone;
}

/** The feed's entries after `since`, read exactly as readChanges reads them, with their positions. */
export async function readChangeEvents(db: Database, since: number, limit: number): Promise<ChangeEvent[]> {
  // changesQuery reads one row more than it is asked for; the times come by primary key after, so the feed's plan stays its own.
  // One snapshot for both reads: a job changed between them keeps the time of the entry read.
  const [rows, times] = await db.transaction(async (tx) => {
    const page = await changesQuery(tx, since, limit - 1);
    if (page.length === 0) return [page, []] as const;
    const at = await tx.select({ jobId: jobChanges.jobId, changedAt: jobChanges.changedAt }).from(jobChanges).where(inArray(jobChanges.jobId, page.map((row) => row.jobId)));
    return [page, at] as const;
  });
  const changedAt = new Map(times.map((row) => [row.jobId, row.changedAt]));
  return rows.map(({ seq, jobId, listable, job }) => ({
    seq: seq!,
    changedAt: changedAt.get(jobId) ?? new Date(0),
    entry: listable && job ? toJob(job) : { id: jobId, removed: true },
  }));
}

import { and, asc, eq, gt, sql } from 'drizzle-orm';
import type { MySqlSelect } from 'drizzle-orm/mysql-core';
import type { Database } from '../client';
import { jobChanges, jobs } from '../schema';
import { primaryOf } from '../sql';
import { lastSequenced, sequencePendingChanges } from './change-numbering';
import type { Job, Tombstone } from '../../domain/job';
import { historyOf, holds, type FeedPosition, type History } from '../../domain/feed';
import { readLineage } from './change-history';
import { publicColumns, toJob } from './job-columns';

export interface ChangePage {
  entries: Array<Job | Tombstone>;
  /** Number of the last entry read (the position to continue after). */
  lastSeq: number | undefined;
  hasMore: boolean;
}

// What a feed entry is read as: its position, its job's id, and the job's current public fields when listable.
const entryColumns = {
  seq: jobChanges.seq,
  jobId: jobChanges.jobId,
  // Listable now: not soft-deleted (visible_status is NULL then), not a draft, not deleted.
  listable: sql`coalesce(${jobs.visibleStatus} <> 'draft', false)`.mapWith(Boolean),
  job: publicColumns,
};

/** The feed's filter and order on a select of job_changes joined to jobs: changes after `since`, `count` of them. */
function afterPosition<T extends MySqlSelect>(query: T, since: number, count: number): T {
  return query
    .where(and(eq(jobChanges.everPublic, true), gt(jobChanges.seq, since)))
    .orderBy(asc(jobChanges.seq))
    .limit(count);
}

/** One page of the feed: the job as it is now when listable, else a tombstone. */
export async function readChanges(db: Database, since: number, limit: number): Promise<ChangePage> {
  const rows = await afterPosition(
    db.select(entryColumns).from(jobChanges).leftJoin(jobs, eq(jobs.id, jobChanges.jobId)).$dynamic(),
    since,
    limit + 1,
  );
  const page = rows.slice(0, limit);
  return {
    entries: page.map(({ jobId, listable, job }) => (listable && job ? toJob(job) : { id: jobId, removed: true })),
    lastSeq: page.at(-1)?.seq ?? undefined,
    hasMore: rows.length > limit,
  };
}

/** A feed page as a poll reads it, with the position to continue from; or why the caller's position is refused. */
export type FeedPage = (ChangePage & { next: FeedPosition }) | { refused: 'ahead' | 'rewritten' };

/** A poll of the feed, on the primary (its positions must never go backwards between two polls). */
export async function pollFeed(db: Database, since: FeedPosition | undefined, limit: number): Promise<FeedPage> {
  const primary = primaryOf(db);
  const stillNumbering = await sequencePendingChanges(primary);
  const lineage = await readLineage(primary);
  // A position of a history the feed no longer holds (a restore), however far the new numbering has come.
  if (since && !holds(lineage, since)) return { refused: 'rewritten' };
  const from = since?.seq ?? 0;
  const page = await readChanges(primary, from, limit);
  if (page.entries.length === 0 && from > (await lastSequenced(primary))) return { refused: 'ahead' };
  const seq = page.lastSeq ?? from;
  return { ...page, hasMore: page.hasMore || stillNumbering, next: { history: historyOf(lineage, seq).id, seq } };
}

/** A feed entry with its position and when its change was written: what a webhook event is made of. */
export interface ChangeEvent {
  seq: number;
  /** The history `seq` was numbered in: with it, the event's id names this change and no other, restores included. */
  history: string;
  changedAt: Date;
  entry: Job | Tombstone;
}

/** The feed's entries after `since`, read exactly as readChanges reads them, with their positions, histories (from `lineage`, read when not given) and times. */
export async function readChangeEvents(
  db: Database,
  since: number,
  limit: number,
  lineage?: readonly History[],
): Promise<ChangeEvent[]> {
  lineage ??= await readLineage(db);
  const rows = await afterPosition(
    db
      .select({ ...entryColumns, changedAt: jobChanges.changedAt })
      .from(jobChanges)
      .leftJoin(jobs, eq(jobs.id, jobChanges.jobId))
      .$dynamic(),
    since,
    limit,
  );
  return rows.map(({ seq, jobId, changedAt, listable, job }) => ({
    seq: seq!,
    history: historyOf(lineage, seq!).id,
    changedAt: changedAt ?? new Date(0),
    entry: listable && job ? toJob(job) : { id: jobId, removed: true },
  }));
}

import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { jobChanges, jobs } from '../schema';
import { bound, prepare, query, type Database, type Queryable, type RowOf } from '../sql';
import { lastSequenced, sequencePendingChanges } from './change-numbering';
import type { Job, Tombstone } from '../../domain/job';
import { historyOf, holds, type FeedPosition, type History } from '../../domain/feed';
import { readLineage } from './change-history';
import { jobColumns, toJob } from './job-columns';

export interface ChangePage {
  entries: Array<Job | Tombstone>;
  /** Number of the last entry read (the position to continue after). */
  lastSeq: number | undefined;
  hasMore: boolean;
}

// What a feed entry is read as: its position, its job's id, and the job's columns (null when the job is gone).
const entryColumns = {
  seq: jobChanges.seq,
  jobId: jobChanges.jobId,
  // Listable now: not soft-deleted (visible_status is NULL then), not a draft, not deleted.
  listable: sql<number>`coalesce(${jobs.visibleStatus} <> 'draft', false)`,
  ...jobColumns,
};
// An event's entry also says when its change was written (a read of job_changes' rows: a page reads its index only).
const eventColumns = { ...entryColumns, changedAt: jobChanges.changedAt };

/** The feed's entries after the position `since`, `limit` of them: job_changes joined to jobs, in change order. */
const entriesAfter = and(eq(jobChanges.everPublic, true), gt(jobChanges.seq, bound('since', jobChanges.seq)));
const toJobs = eq(jobs.id, jobChanges.jobId);
const LIMIT = sql.placeholder('limit');
const PAGE = prepare(entryColumns, (select) =>
  select.from(jobChanges).leftJoin(jobs, toJobs).where(entriesAfter).orderBy(asc(jobChanges.seq)).limit(LIMIT),
);
const EVENTS = prepare(eventColumns, (select) =>
  select.from(jobChanges).leftJoin(jobs, toJobs).where(entriesAfter).orderBy(asc(jobChanges.seq)).limit(LIMIT),
);

/** An entry as the feed shows it: the job as it is now when listable, else a tombstone. */
const entryOf = (row: RowOf<typeof entryColumns>): Job | Tombstone =>
  row.listable === 1 ? toJob(row) : { id: row.jobId, removed: true };

/** One page of the feed. */
export async function readChanges(db: Queryable, since: number, limit: number): Promise<ChangePage> {
  const rows = await query(db, PAGE, { since, limit: limit + 1 });
  const page = rows.slice(0, limit);
  return {
    entries: page.map(entryOf),
    lastSeq: page.at(-1)?.seq ?? undefined,
    hasMore: rows.length > limit,
  };
}

/** A feed page as a poll reads it, with the position to continue from; or why the caller's position is refused. */
export type FeedPage = (ChangePage & { next: FeedPosition }) | { refused: 'ahead' | 'rewritten' };

/** A poll of the feed, on the primary (its positions must never go backwards between two polls). */
export async function pollFeed(db: Database, since: FeedPosition | undefined, limit: number): Promise<FeedPage> {
  const stillNumbering = await sequencePendingChanges(db);
  const lineage = await readLineage(db);
  // A position of a history the feed no longer holds (a restore), however far the new numbering has come.
  if (since && !holds(lineage, since)) return { refused: 'rewritten' };
  const from = since?.seq ?? 0;
  const page = await readChanges(db, from, limit);
  if (page.entries.length === 0 && from > (await lastSequenced(db))) return { refused: 'ahead' };
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
  const rows = await query(db, EVENTS, { since, limit });
  return rows.map((row) => ({
    seq: row.seq!,
    history: historyOf(lineage, row.seq!).id,
    changedAt: row.changedAt ?? new Date(0),
    entry: entryOf(row),
  }));
}

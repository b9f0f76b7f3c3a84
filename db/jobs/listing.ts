import type { Job, ListFilter } from '../../service/jobs/contract/job';
import type { Database } from '../client';
import { primaryOf, readerOf } from '../replicas';
import { jobs } from '../schema';
import { readRows, type Statement } from '../sql';
import { foldSoon } from './counters';
import { rowToJob } from './job-columns';
import { countedOf, countStatement, dayCountsStatement, pageStatement, planList, type ListPlan, type ListPosition, type PageWindow } from './listing-statements';

export type { ListPosition } from './listing-statements';

/**
 * A listing page, read with the statements of listing-statements.ts: the total from job_counts and the page
 * from the filter's index. A keyset page reads one more row than it shows, to know whether
 * another page follows; deep offset pages are read from the nearer end and, for status-only
 * listings, from their day.
 */

/** Offset pages (`page`), or a keyset walk after a position (`after`, null for the top). */
export type ListMode = { page: number } | { after: ListPosition | null };

export interface JobPage {
  rows: Job[];
  total: number;
  /** Whether a job follows the last row (in the same snapshot for a keyset walk). */
  hasMore: boolean;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Listing order (newest first, then the larger id) on the page's rows, which the join by primary key does not promise. */
export const byListingOrder = (a: Job, b: Job) => compare(b.createdAt, a.createdAt) || compare(b.id, a.id);

/** A listing's total (job_counts), and how many connection rows it summed that a fold would merge. */
export async function countJobs(reader: Database, query: ListFilter): Promise<{ total: number; unfolded: number }> {
  return countedOf(await readRows(reader, countStatement(query)));
}

export async function listJobs(db: Database, query: ListFilter & { limit: number; page: number }, mode: ListMode = { page: query.page }): Promise<JobPage> {
  const counted = async (reader: Database) => {
    const { total, unfolded } = await countJobs(reader, query);
    // Connection rows were summed: fold them (in the background, on the primary) so totals stay cheap.
    if (unfolded > 0) foldSoon(primaryOf(db));
    return total;
  };
  const plan = planList(query);
  const page = async (reader: Database, window: PageWindow) => (await readRows(reader, pageStatement(plan, window))).map(rowToJob).sort(byListingOrder);

  if ('after' in mode) {
    const [total, rows] = await Promise.all([counted(db), page(db, { after: mode.after, skip: 0, take: query.limit + 1 })]);
    return { rows: rows.slice(0, query.limit), total, hasMore: rows.length > query.limit };
  }
  const offset = (mode.page - 1) * query.limit;
  if (offset === 0) {
    // First page: both statements at once.
    const [total, rows] = await Promise.all([counted(db), page(db, { after: null, skip: 0, take: query.limit })]);
    return { rows, total, hasMore: rows.length < total };
  }
  // Later pages: the total first, then the page, from the same database (one replica). A page
  // past the end is not read (OFFSET would still step over every match to find nothing), and one
  // nearer the end than the start is counted from the end, so no page steps over more than half
  // the listing's entries. As before, a write committed between the two statements can shift
  // the page by one row per write (counted from the end, only a write older than the page does).
  const reader = readerOf(db);
  const total = await counted(reader);
  // Stryker disable next-line EqualityOperator,BooleanLiteral: equivalent, at offset = total the window takes 0 rows (docs/decisions.md)
  if (offset >= total) return { rows: [], total, hasMore: false };
  const window = await offsetWindow((statement) => readRows(reader, statement), plan, offset, query.limit, total);
  const rows = await page(reader, window);
  return { rows, total, hasMore: offset + rows.length < total };
}

/** Runs a statement on one database (one replica) and returns its rows as arrays. */
export type ReadRows = (statement: Statement) => Promise<unknown[][]>;

/** A skip at least this long walks the day counts first: below it, stepping over entries is cheaper. */
export const DAY_JUMP_MIN = 1000;
const DAYS_PER_READ = 100;
const DAY_MS = 86_400_000;

/**
 * The window of an offset page past the first, whose listing holds `total` jobs (offset < total):
 * counted from the nearer end, so no page steps over more than half the listing's entries, and for
 * a status-only listing started at the day that holds its first row (startAtDay).
 */
export async function offsetWindow(read: ReadRows, plan: ListPlan, offset: number, limit: number, total: number): Promise<PageWindow> {
  const take = Math.min(limit, total - offset);
  // Counted from the end only when that steps over fewer entries; a tie reads forward.
  const skip = Math.min(offset, total - offset - take);
  const window: PageWindow = skip < offset ? { after: null, skip, take, fromEnd: true } : { after: null, skip, take };
  return plan.statusesOnly && window.skip >= DAY_JUMP_MIN ? startAtDay(read, plan.statusesOnly, window) : window;
}

/**
 * The window moved to the day (of created_at, UTC) that holds its first row, walking
 * job_day_counts from the window's end of the listing: the page then skips only within that
 * day. Days are read 100 at a time, so the walk costs about one statement per 100 days passed.
 * If the counts run out first (a write between the total and this walk), the window is left as
 * it was: a plain skip, never a wrong one.
 */
export async function startAtDay(read: ReadRows, statuses: readonly string[], window: PageWindow): Promise<PageWindow> {
  const fromEnd = window.fromEnd === true;
  let passed = 0;
  let past: string | undefined;
  for (;;) {
    const days = (await read(dayCountsStatement(statuses, fromEnd, past, DAYS_PER_READ))) as Array<[string, unknown]>;
    for (const [day, counted] of days) {
      const n = Number(counted);
      if (passed + n > window.skip) {
        const start = new Date(`${day}T00:00:00.000Z`).getTime();
        return { ...window, skip: window.skip - passed, from: String(jobs.createdAt.mapToDriverValue(new Date(fromEnd ? start : start + DAY_MS))) };
      }
      passed += n;
    }
    if (days.length < DAYS_PER_READ) return window;
    past = days.at(-1)![0];
  }
}

import type { Job } from '../../domain/job';
import type { ListFilter } from '../../domain/list-filters';
import { readerOf, type Database, type Queryable } from '../sql';
import { toJob } from './job-columns';
import { planList, type ListPlan } from './listing/plan';
import {
  readDays,
  readPage,
  readTotal,
  type Counted,
  type DayCount,
  type DaysAsked,
  type ListPosition,
  type PageWindow,
} from './listing/statements';

/** How a listing is paged: the plan's statements (listing/plan.ts, listing/statements.ts) over a page, a keyset walk or a deep offset. */

export type { ListPosition, PageWindow } from './listing/statements';

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

/** A listing's total: exact from job_counts, or counted on its index up to COUNTED_UP_TO. */
export function countJobs(db: Database, query: ListFilter): Promise<Counted> {
  return readTotal(readerOf(db), planList(query), query);
}

/** Reads days of job_day_counts: how a deep page finds the day its first row is in. */
export type DayReads = (asked: DaysAsked) => Promise<DayCount[]>;

/** GET /api/v1/jobs's page: its rows in listing order, every statement on one replica (or the primary). */
export async function listJobs(
  db: Database,
  query: ListFilter & { limit: number; page: number },
  mode: ListMode = { page: query.page },
): Promise<JobPage> {
  const reader = readerOf(db);
  const plan = planList(query);
  const total = () => readTotal(reader, plan, query);
  const rowsOf = async (window: PageWindow) => (await readPage(reader, plan, window)).map(toJob).sort(byListingOrder);
  const { limit } = query;

  if ('after' in mode) {
    const [counted, rows] = await Promise.all([total(), rowsOf({ after: mode.after, skip: 0, take: limit + 1 })]);
    return { total: counted.total, rows: rows.slice(0, limit), hasMore: rows.length > limit };
  }
  const offset = (mode.page - 1) * limit;
  if (offset === 0) {
    // First page: both statements at once; without an exact total, one row more tells whether a page follows.
    const take = plan.counted ? limit : limit + 1;
    const [counted, rows] = await Promise.all([total(), rowsOf({ after: null, skip: 0, take })]);
    return {
      total: counted.total,
      rows: rows.slice(0, limit),
      hasMore: plan.counted ? rows.length < counted.total : rows.length > limit,
    };
  }
  const counted = await total();
  if (!counted.exact) {
    // Past the bound the total is not known: read forward, one row more.
    const rows = await rowsOf({ after: null, skip: offset, take: limit + 1 });
    return { total: counted.total, rows: rows.slice(0, limit), hasMore: rows.length > limit };
  }
  if (offset >= counted.total) return { total: counted.total, rows: [], hasMore: false };
  const rows = await rowsOf(await offsetWindow(dayReadsOn(reader), plan, { offset, limit, total: counted.total }));
  return { total: counted.total, rows, hasMore: offset + rows.length < counted.total };
}

/** A skip at least this long walks the day counts first: below it, stepping over entries is cheaper. */
export const DAY_JUMP_MIN = 1000;
const DAYS_PER_READ = 100;
const DAY_MS = 86_400_000;

/** The window of an offset page past the first, whose listing holds `total` jobs (offset < total). */
export async function offsetWindow(
  days: DayReads,
  plan: ListPlan,
  { offset, limit, total }: { offset: number; limit: number; total: number },
): Promise<PageWindow> {
  const take = Math.min(limit, total - offset);
  // Counted from the end only when that steps over fewer entries; a tie reads forward.
  const skip = Math.min(offset, total - offset - take);
  const window: PageWindow = skip < offset ? { after: null, skip, take, fromEnd: true } : { after: null, skip, take };
  return plan.statusesOnly && window.skip >= DAY_JUMP_MIN ? startAtDay(days, plan.statusesOnly, window) : window;
}

/** The window moved to the day (of created_at, UTC) that holds its first row, walking job_day_counts from the window's end of the listing. */
export async function startAtDay(
  readDays: DayReads,
  statuses: readonly string[],
  window: PageWindow,
): Promise<PageWindow> {
  const fromEnd = window.fromEnd === true;
  let passed = 0;
  let past: string | undefined;
  for (;;) {
    const days = await readDays({ statuses, fromEnd, past, days: DAYS_PER_READ });
    for (const { day, n } of days) {
      if (passed + n > window.skip) {
        const start = new Date(`${day}T00:00:00.000Z`).getTime();
        return { ...window, skip: window.skip - passed, from: new Date(fromEnd ? start : start + DAY_MS) };
      }
      passed += n;
    }
    if (days.length < DAYS_PER_READ) return window;
    past = days.at(-1)!.day;
  }
}

/** The day reads of `on`. */
export const dayReadsOn =
  (on: Queryable): DayReads =>
  (asked) =>
    readDays(on, asked);

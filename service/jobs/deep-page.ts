import { jobs } from '../../db/schema';
import { dayCountsStatement } from './job-counts';
import type { Statement } from './job-rows';
import type { ListPlan, PageWindow } from './list-plan';

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

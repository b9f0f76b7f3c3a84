import { getTableName } from 'drizzle-orm';
import { getTableConfig, type MySqlColumn } from 'drizzle-orm/mysql-core';
import { DEFAULT_STATUSES, JOB_TYPES, LIST_FILTERS, type Job, type ListFilter } from '../../domain/job';
import type { Database } from '../client';
import { jobCounts, jobDayCounts, jobs } from '../schema';
import { primaryOf, quote, readerOf, readRows, type Statement } from '../sql';
import { foldSoon } from './counters';
import { PUBLIC_SELECT_LIST, rowToJob } from './job-columns';

/** A listing page, read with the statements below: the total from job_counts and the page from the filter's index. */

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
  // Later pages: the total first, then the page, from the same database (one replica).
  const reader = readerOf(db);
  const total = await counted(reader);
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

/** The window of an offset page past the first, whose listing holds `total` jobs (offset < total). */
export async function offsetWindow(read: ReadRows, plan: ListPlan, offset: number, limit: number, total: number): Promise<PageWindow> {
  const take = Math.min(limit, total - offset);
  // Counted from the end only when that steps over fewer entries; a tie reads forward.
  const skip = Math.min(offset, total - offset - take);
  const window: PageWindow = skip < offset ? { after: null, skip, take, fromEnd: true } : { after: null, skip, take };
  return plan.statusesOnly && window.skip >= DAY_JUMP_MIN ? startAtDay(read, plan.statusesOnly, window) : window;
}

/** The window moved to the day (of created_at, UTC) that holds its first row, walking job_day_counts from the window's end of the listing. */
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

/** How a listing page is read, for every combination of filters. */

/** The leading column: `listed` (active or open, not deleted) for the default statuses, else `visible_status`. */
type Prefix = 'listed' | 'status';
/** Filters matched by equality after the prefix, in the order index names spell them (alphabetical). */
const DIMENSIONS = LIST_FILTERS.filter((name): name is Exclude<typeof name, 'status'> => name !== 'status').sort();
type Dimension = (typeof DIMENSIONS)[number];

const COLUMNS: Record<Prefix | Dimension, MySqlColumn> = {
  listed: jobs.listed,
  status: jobs.visibleStatus,
  department: jobs.departmentKey,
  type: jobs.type,
  workplace: jobs.workplace,
};

const CREATED_AT = quote(jobs.createdAt.name);
const ID = quote(jobs.id.name);
/** Listing order, or its reverse for a window counted from the end. */
const order = (fromEnd: boolean, id = ID) => (fromEnd ? `order by ${CREATED_AT}, ${id}` : `order by ${CREATED_AT} desc, ${id} desc`);
const JOBS = quote(getTableName(jobs));

/** The schema's index for a prefix and set of dimensions, found by its columns (db/schema.ts). */
const INDEXES = (() => {
  const byColumns = new Map<string, string>();
  for (const index of getTableConfig(jobs).indexes) {
    const names = index.config.columns.map((column) => (column as MySqlColumn).name);
    if (names.slice(-2).join() !== [jobs.createdAt.name, jobs.id.name].join()) continue;
    byColumns.set(names.slice(0, -2).sort().join(), index.config.name);
  }
  const found = new Map<string, string>();
  for (const prefix of ['listed', 'status'] as const) {
    for (let mask = 0; mask < 1 << DIMENSIONS.length; mask++) {
      const dimensions = DIMENSIONS.filter((_d, i) => mask & (1 << i));
      const key = [prefix, ...dimensions].map((name) => COLUMNS[name].name).sort().join();
      const name = byColumns.get(key);
      // Every filter combination must have its index: a missing one is a schema mistake, found at start-up.
      if (!name) throw new Error(`db/schema.ts has no index on (${key}, created_at, id) for listings`);
      found.set(`${prefix}:${dimensions.join()}`, name);
    }
  }
  return found;
})();

export interface ListPlan {
  /** The index every read of the page uses. */
  index: string;
  /** The equality conditions, with `?` for values, shared by every combination. */
  where: string;
  /** One parameter list per value combination (a single one when no filter is a list). */
  combinations: unknown[][];
  /** For a filter on statuses only (the default listing included): those statuses, whose day counts cover it. */
  statusesOnly?: readonly string[];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value) => b.includes(value));
}

/** The plan for a listing's filters (status, type, workplace, department); paging comes later. */
export function planList(query: ListFilter): ListPlan {
  // Asking for active and open is asking for the default listing: one read of `listed`.
  const listed = !query.status || sameSet(query.status, DEFAULT_STATUSES);
  const prefix: Prefix = listed ? 'listed' : 'status';
  // All six types is no type filter (type is never NULL); all three workplaces is not (NULL is none).
  const types = query.type && query.type.length < JOB_TYPES.length ? query.type : undefined;
  const values: Record<Prefix | Dimension, readonly unknown[] | undefined> = {
    listed: [true],
    status: listed ? undefined : query.status,
    department: query.department === undefined ? undefined : [query.department],
    type: types,
    workplace: query.workplace,
  };
  const used = ([prefix, ...DIMENSIONS] as const).filter((name) => values[name] !== undefined);
  const where = used
    .map((name) => `${quote(COLUMNS[name].name)} = ${name === 'department' ? 'lower(?)' : '?'}`)
    .join(' and ');
  let combinations: unknown[][] = [[]];
  for (const name of used) combinations = combinations.flatMap((head) => values[name]!.map((value) => [...head, value]));
  const dimensions = DIMENSIONS.filter((d) => values[d] !== undefined);
  return {
    index: INDEXES.get(`${prefix}:${dimensions.join()}`)!,
    where,
    combinations,
    ...(dimensions.length === 0 ? { statusesOnly: query.status ?? DEFAULT_STATUSES } : {}),
  };
}

/** A place in the listing order; a keyset page starts strictly after it. */
export interface ListPosition {
  createdAt: Date;
  id: string;
}

/** Which slice of the listing a page is. */
export interface PageWindow {
  after: ListPosition | null;
  skip: number;
  take: number;
  fromEnd?: boolean;
  /** Where the read starts (a created_at, as the driver writes it): only rows created before it, or with `fromEnd` at or after it. */
  from?: string;
}

const AFTER = `(${CREATED_AT} < ? or (${CREATED_AT} = ? and ${ID} < ?))`;
const afterParams = (after: ListPosition) => {
  const createdAt = jobs.createdAt.mapToDriverValue(after.createdAt);
  return [createdAt, createdAt, jobs.id.mapToDriverValue(after.id)];
};

/** The page's rows in one statement. */
export function pageStatement(plan: ListPlan, window: PageWindow): Statement {
  const fromEnd = window.fromEnd === true;
  let where = window.after ? `${plan.where} and ${AFTER}` : plan.where;
  const after = window.after ? afterParams(window.after) : [];
  if (window.from !== undefined) {
    where += ` and ${CREATED_AT} ${fromEnd ? '>=' : '<'} ?`;
    after.push(window.from);
  }
  const from = `from ${JOBS} force index (${quote(plan.index)}) where ${where} ${order(fromEnd)}`;
  let ids: string;
  let params: unknown[];
  if (plan.combinations.length === 1) {
    ids = `select ${ID} as \`page_id\` ${from} limit ? offset ?`;
    params = [...plan.combinations[0]!, ...after, window.take, window.skip];
  } else {
    // Each combination's first skip + take in order; the window is then cut from their union.
    const reads = plan.combinations.map(() => `(select ${ID} as \`page_id\`, ${CREATED_AT} ${from} limit ?)`);
    ids = `select \`page_id\` from (${reads.join(' union all ')}) \`matches\` ${order(fromEnd, '`page_id`')} limit ? offset ?`;
    params = [...plan.combinations.flatMap((combination) => [...combination, ...after, window.skip + window.take]), window.take, window.skip];
  }
  return {
    sql: `select ${PUBLIC_SELECT_LIST} from (${ids}) \`page_ids\` join ${JOBS} on ${JOBS}.${ID} = \`page_ids\`.\`page_id\``,
    params,
  };
}

const c = (column: { name: string }) => quote(column.name);
const inList = (column: { name: string }, values: readonly unknown[]) => `${c(column)} in (${values.map(() => '?').join(', ')})`;

/** A listing's exact total from job_counts (kept by triggers on `jobs`, migrations 0008 and 0010). */

export function countStatement(query: ListFilter): Statement {
  const department = query.department === undefined ? `${c(jobCounts.departmentKey)} = ''` : `${c(jobCounts.departmentKey)} = lower(?)`;
  const statuses = query.status ?? DEFAULT_STATUSES;
  const conditions = [`${c(jobCounts.byDepartment)} = ?`, department, inList(jobCounts.status, statuses)];
  const params: unknown[] = [query.department !== undefined, ...(query.department === undefined ? [] : [query.department]), ...statuses];
  if (query.type) {
    conditions.push(inList(jobCounts.type, query.type));
    params.push(...query.type);
  }
  if (query.workplace) {
    conditions.push(inList(jobCounts.workplace, query.workplace));
    params.push(...query.workplace);
  }
  return {
    // SUMs of BIGINTs are DECIMALs: the pool reads DECIMALs as numbers (db/client.ts).
    sql: `select coalesce(sum(${c(jobCounts.n)}), 0), coalesce(sum(${c(jobCounts.slot)} <> 0), 0) from ${quote(getTableName(jobCounts))} where ${conditions.join(' and ')}`,
    params,
  };
}

/** Up to `days` days of job_day_counts in listing order (newest first) or, `fromEnd`, oldest first, after `past` when given. */
export function dayCountsStatement(statuses: readonly string[], fromEnd: boolean, past: string | undefined, days: number): Statement {
  const day = c(jobDayCounts.day);
  const conditions = [inList(jobDayCounts.status, statuses), ...(past === undefined ? [] : [`${day} ${fromEnd ? '>' : '<'} ?`])];
  return {
    sql: `select ${day}, sum(${c(jobDayCounts.n)}) from ${quote(getTableName(jobDayCounts))} where ${conditions.join(' and ')} group by ${day} order by ${day}${fromEnd ? '' : ' desc'} limit ?`,
    params: [...statuses, ...(past === undefined ? [] : [past]), days],
  };
}

export interface Counted {
  total: number;
  /** Connection rows among those summed: a fold would make the next total cheaper. */
  unfolded: number;
}

export const countedOf = (rows: unknown[][]): Counted => ({ total: Number(rows[0]?.[0] ?? 0), unfolded: Number(rows[0]?.[1] ?? 0) });

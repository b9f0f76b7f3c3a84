import { getTableColumns, getTableName } from 'drizzle-orm';
import { getTableConfig, type MySqlColumn } from 'drizzle-orm/mysql-core';
import { DEFAULT_STATUSES, type Job } from '../../domain/job';
import { COUNTED_UP_TO, FILTER_NAMES, LIST_FILTERS, type FilterDeclaration, type FilterName, type ListFilter } from '../../domain/list-filters';
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

/** A listing's total: exact from job_counts, or counted on its index up to COUNTED_UP_TO. */
export async function countJobs(reader: Database, query: ListFilter): Promise<Counted> {
  const plan = planList(query);
  return plan.counted ? countedOf(await readRows(reader, countStatement(query))) : boundedOf(await readRows(reader, boundedCountStatement(plan)));
}

/** GET /api/v1/jobs's page: its rows in listing order, on one database (one replica). */
export async function listJobs(db: Database, query: ListFilter & { limit: number; page: number }, mode: ListMode = { page: query.page }): Promise<JobPage> {
  const reader = readerOf(db);
  const read = await readListing((statement) => readRows(reader, statement), query, query.limit, mode, rowToJob, byListingOrder);
  // Connection rows were summed: fold them (in the background, on the primary) so totals stay cheap.
  if (read.unfolded > 0) foldSoon(primaryOf(db));
  return { rows: read.rows, total: read.total, hasMore: read.hasMore };
}

/** A listing page's rows in listing order, its total and whether a job follows. */
export interface ListingRead<T> extends Counted {
  rows: T[];
  hasMore: boolean;
}

/**
 * The statements of a listing page, each run with `read` (the service's and the raw baseline's
 * alike); `rowOf` makes a row of the driver's, `order` is listing order on them (the join by
 * primary key does not keep it).
 */
export async function readListing<T>(read: ReadRows, query: ListFilter, limit: number, mode: ListMode, rowOf: (row: unknown[]) => T, order: (a: T, b: T) => number): Promise<ListingRead<T>> {
  const plan = planList(query);
  const count = async () => (plan.counted ? countedOf(await read(countStatement(query))) : boundedOf(await read(boundedCountStatement(plan))));
  const rowsOf = async (window: PageWindow) => (await read(pageStatement(plan, window))).map(rowOf).sort(order);

  if ('after' in mode) {
    const [counted, rows] = await Promise.all([count(), rowsOf({ after: mode.after, skip: 0, take: limit + 1 })]);
    return { ...counted, rows: rows.slice(0, limit), hasMore: rows.length > limit };
  }
  const offset = (mode.page - 1) * limit;
  if (offset === 0) {
    // First page: both statements at once; without an exact total, one row more tells whether a page follows.
    const take = plan.counted ? limit : limit + 1;
    const [counted, rows] = await Promise.all([count(), rowsOf({ after: null, skip: 0, take })]);
    return { ...counted, rows: rows.slice(0, limit), hasMore: plan.counted ? rows.length < counted.total : rows.length > limit };
  }
  const counted = await count();
  if (!counted.exact) {
    // Past the bound the total is not known: read forward, one row more.
    const rows = await rowsOf({ after: null, skip: offset, take: limit + 1 });
    return { ...counted, rows: rows.slice(0, limit), hasMore: rows.length > limit };
  }
  if (offset >= counted.total) return { ...counted, rows: [], hasMore: false };
  const rows = await rowsOf(await offsetWindow(read, plan, offset, limit, counted.total));
  return { ...counted, rows, hasMore: offset + rows.length < counted.total };
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

/**
 * How a listing page is read. Each filter but status has two indexes, (lead, its column,
 * created_at, id), one per lead: `listed` (active or open, not deleted) for the default statuses,
 * else `visible_status` (db/schema.ts). A page reads the index of the filter that matches fewest
 * jobs, one ordered range per value, and checks the other filters on the rows it meets.
 */

type Lead = 'listed' | 'status';
const LEADS: Record<Lead, MySqlColumn> = { listed: jobs.listed, status: jobs.visibleStatus };

interface Narrowing {
  name: FilterName;
  declared: FilterDeclaration;
  column: MySqlColumn;
}

/** The jobs column a declaration names (its key in db/schema.ts). */
function columnOf(key: string): MySqlColumn {
  const column = (getTableColumns(jobs) as Record<string, MySqlColumn>)[key];
  if (!column) throw new Error(`domain/list-filters.ts names ${key}, which db/schema.ts's jobs table does not have`);
  return column;
}

/** Every filter but status (which picks the lead), in declared order. */
const NARROWING: Narrowing[] = FILTER_NAMES.filter((name) => name !== 'status').map((name) => ({ name, declared: LIST_FILTERS[name], column: columnOf(LIST_FILTERS[name].column) }));

const CREATED_AT = quote(jobs.createdAt.name);
const ID = quote(jobs.id.name);
/** Listing order, or its reverse for a window counted from the end. */
const order = (fromEnd: boolean, id = ID) => (fromEnd ? `order by ${CREATED_AT}, ${id}` : `order by ${CREATED_AT} desc, ${id} desc`);
const JOBS = quote(getTableName(jobs));

/** The schema's index for a lead and filter ('' for none), found by its columns: a missing one is a schema mistake, found at start-up. */
const INDEXES = (() => {
  const byColumns = new Map(getTableConfig(jobs).indexes.map((index) => [index.config.columns.map((column) => (column as MySqlColumn).name).join(), index.config.name]));
  const found = new Map<string, string>();
  for (const [lead, leadColumn] of Object.entries(LEADS)) {
    for (const narrowing of [undefined, ...NARROWING]) {
      const key = [leadColumn, ...(narrowing ? [narrowing.column] : []), jobs.createdAt, jobs.id].map((column) => column.name).join();
      const name = byColumns.get(key);
      if (!name) throw new Error(`db/schema.ts has no index on (${key}) for listings`);
      found.set(`${lead}:${narrowing?.name ?? ''}`, name);
    }
  }
  return found;
})();

export interface ListPlan {
  /** The index every read of the page uses. */
  index: string;
  /** The conditions of one ordered range (`?` for the lead's and the index filter's value), then the other filters'. */
  where: string;
  /** One parameter list per ordered range (lead value x index filter value), each ending with the other filters' values. */
  combinations: unknown[][];
  /** Every condition at once, value lists as `in`: what a bounded count reads. */
  matching: Statement;
  /** The total is exact from job_counts: no filter outside it is given. */
  counted: boolean;
  /** For a filter on statuses only (the default listing included): those statuses, whose day counts cover it. */
  statusesOnly?: readonly string[];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value) => b.includes(value));
}

/** A filter's values as the query gives them, or undefined when it does not narrow the listing. */
function valuesOf({ declared, name }: Narrowing, query: ListFilter): readonly string[] | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value === 'string') return [value];
  // Every value of a filter every job has is no filter (type is never NULL; a NULL workplace is none of them).
  if (declared.kind === 'values' && declared.everyJobHasOne && sameSet(value, declared.values)) return undefined;
  return value;
}

/** `column = ?`, folded as the stored value is for a text filter. */
const equals = (narrowing: Narrowing) => `${quote(narrowing.column.name)} = ${narrowing.declared.kind === 'text' ? 'lower(?)' : '?'}`;
const oneOf = (narrowing: Narrowing, values: readonly unknown[]) =>
  values.length === 1 ? equals(narrowing) : `${quote(narrowing.column.name)} in (${values.map(() => (narrowing.declared.kind === 'text' ? 'lower(?)' : '?')).join(', ')})`;

/** The plan for a listing's filters; paging comes later. */
export function planList(query: ListFilter): ListPlan {
  // Asking for active and open is asking for the default listing: one read of `listed`.
  const listed = !query.status || sameSet(query.status, DEFAULT_STATUSES);
  const lead: Lead = listed ? 'listed' : 'status';
  const leadValues: readonly unknown[] = listed ? [true] : query.status!;
  const leadEquals = `${quote(LEADS[lead].name)} = ?`;
  const used = NARROWING.flatMap((narrowing) => {
    const values = valuesOf(narrowing, query);
    return values ? [{ narrowing, values }] : [];
  });
  // The index of the filter that matches fewest jobs; the others are checked on its rows.
  const share = ({ narrowing, values }: (typeof used)[number]) => values.length * narrowing.declared.percentPerValue;
  const chosen = used.reduce<(typeof used)[number] | undefined>((best, next) => (best === undefined || share(next) < share(best) ? next : best), undefined);
  const others = used.filter((filter) => filter !== chosen);
  const checks = others.map(({ narrowing, values }) => oneOf(narrowing, values));
  const checked = others.flatMap(({ values }) => values);
  const ranges = chosen ? leadValues.flatMap((value) => chosen.values.map((one) => [value, one])) : leadValues.map((value) => [value]);
  const leadIn = leadValues.length === 1 ? leadEquals : `${quote(LEADS[lead].name)} in (${leadValues.map(() => '?').join(', ')})`;
  return {
    index: INDEXES.get(`${lead}:${chosen?.narrowing.name ?? ''}`)!,
    where: [leadEquals, ...(chosen ? [equals(chosen.narrowing)] : []), ...checks].join(' and '),
    combinations: ranges.map((range) => [...range, ...checked]),
    matching: {
      sql: [leadIn, ...(chosen ? [oneOf(chosen.narrowing, chosen.values)] : []), ...checks].join(' and '),
      params: [...leadValues, ...(chosen?.values ?? []), ...checked],
    },
    counted: used.every(({ narrowing }) => narrowing.declared.counted),
    ...(used.length === 0 ? { statusesOnly: query.status ?? DEFAULT_STATUSES } : {}),
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

/** The job_counts column of a counted filter: the same key as its jobs column. */
function countedColumn(key: string): MySqlColumn {
  const column = (getTableColumns(jobCounts) as Record<string, MySqlColumn>)[key];
  if (!column) throw new Error(`domain/list-filters.ts counts ${key} in job_counts, which has no such column`);
  return column;
}

/** The counted value filters with their job_counts columns; the counted text filter (department) has rows of its own (by_department). */
const COUNTED_VALUES = NARROWING.filter(({ declared }) => declared.counted && declared.kind !== 'text').map((narrowing) => ({ ...narrowing, counts: countedColumn(narrowing.declared.column) }));

/** A listing's exact total from job_counts (kept by triggers on `jobs`, migrations 0008 and 0010), for a filter of counted filters only. */
export function countStatement(query: ListFilter): Statement {
  const department = query.department === undefined ? `${c(jobCounts.departmentKey)} = ''` : `${c(jobCounts.departmentKey)} = lower(?)`;
  const statuses = query.status ?? DEFAULT_STATUSES;
  const conditions = [`${c(jobCounts.byDepartment)} = ?`, department, inList(jobCounts.status, statuses)];
  const params: unknown[] = [query.department !== undefined, ...(query.department === undefined ? [] : [query.department]), ...statuses];
  for (const { name, counts } of COUNTED_VALUES) {
    const values = query[name];
    if (values === undefined || typeof values === 'string') continue;
    conditions.push(inList(counts, values));
    params.push(...values);
  }
  return {
    // SUMs of BIGINTs are DECIMALs: the pool reads DECIMALs as numbers (db/client.ts).
    sql: `select coalesce(sum(${c(jobCounts.n)}), 0), coalesce(sum(${c(jobCounts.slot)} <> 0), 0) from ${quote(getTableName(jobCounts))} where ${conditions.join(' and ')}`,
    params,
  };
}

/** A listing's total counted on its index, up to one past COUNTED_UP_TO: a filter job_counts does not keep. */
export function boundedCountStatement(plan: ListPlan): Statement {
  return {
    sql: `select count(*) from (select 1 from ${JOBS} force index (${quote(plan.index)}) where ${plan.matching.sql} limit ?) \`matches\``,
    params: [...plan.matching.params, COUNTED_UP_TO + 1],
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
  /** The total, or with `exact` false, COUNTED_UP_TO: at least that many. */
  total: number;
  exact: boolean;
  /** Connection rows among those summed: a fold would make the next total cheaper. */
  unfolded: number;
}

export const countedOf = (rows: unknown[][]): Counted => ({ total: Number(rows[0]?.[0] ?? 0), exact: true, unfolded: Number(rows[0]?.[1] ?? 0) });

const boundedOf = (rows: unknown[][]): Counted => {
  const counted = Number(rows[0]?.[0] ?? 0);
  return { total: Math.min(counted, COUNTED_UP_TO), exact: counted <= COUNTED_UP_TO, unfolded: 0 };
};

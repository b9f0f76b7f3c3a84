import { and, asc, count, desc, eq, getTableColumns, gt, gte, inArray, lt, or, sql, type SQL } from 'drizzle-orm';
import { getTableConfig, type MySqlColumn } from 'drizzle-orm/mysql-core';
import { DEFAULT_STATUSES, type Job } from '../../domain/job';
import {
  COUNTED_UP_TO,
  FILTER_NAMES,
  LIST_FILTERS,
  type FilterDeclaration,
  type FilterName,
  type ListFilter,
} from '../../domain/list-filters';
import type { Database } from '../client';
import { jobCounts, jobDayCounts, jobs } from '../schema';
import { driverOf, driverRows, primaryOf, readerOf, statementText, textOnly, type Statement } from '../sql';
import { foldSoon } from './counters';
import { publicColumns, rowToJob } from './job-columns';

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
export function countJobs(reader: Database, query: ListFilter): Promise<Counted> {
  return databaseReads(reader).count(planList(query), query);
}

/** GET /api/v1/jobs's page: its rows in listing order, on one database (one replica). */
export async function listJobs(
  db: Database,
  query: ListFilter & { limit: number; page: number },
  mode: ListMode = { page: query.page },
): Promise<JobPage> {
  const read = await readListing(databaseReads(readerOf(db)), query, query.limit, mode, byListingOrder);
  // Connection rows were summed: fold them (in the background, on the primary) so totals stay cheap.
  if (read.unfolded > 0) foldSoon(primaryOf(db));
  return { rows: read.rows, total: read.total, hasMore: read.hasMore };
}

/** A listing page's rows in listing order, its total and whether a job follows. */
export interface ListingRead<T> extends Counted {
  rows: T[];
  hasMore: boolean;
}

/** One day of job_day_counts for some statuses: its date (YYYY-MM-DD) and their jobs created that day. */
export interface DayCount {
  day: string;
  n: number;
}

/** The three reads of a listing, on one database (one replica): the statements below, run by drizzle or, for the raw baseline, as text. */
export interface ListingReads<T> {
  count(plan: ListPlan, query: ListFilter): Promise<Counted>;
  /** The window's rows, in no particular order. */
  page(plan: ListPlan, window: PageWindow): Promise<T[]>;
  days: DayReads;
}

/** Up to `days` days of job_day_counts for `statuses` in listing order (or, `fromEnd`, oldest first), after `past` when given. */
export type DayReads = (
  statuses: readonly string[],
  fromEnd: boolean,
  past: string | undefined,
  days: number,
) => Promise<DayCount[]>;

/** The listing's statements on `reader`: their text, built by drizzle once per shape, run on its driver (db/sql.ts driverRows). */
export function databaseReads(reader: Database): ListingReads<Job> {
  const driver = driverOf(reader);
  if (!driver) throw new Error('a listing reads on a database, not in a transaction');
  return statementReads((statement) => driverRows(driver, statement), rowToJob);
}

/** Runs a statement's text on one database (one replica) and returns its rows as arrays: the raw baseline's driver. */
export type ReadRows = (statement: Statement) => Promise<unknown[][]>;

/** The same statements' text (drizzle's toSQL()), run with `read`; `rowOf` makes a page row of the driver's array. */
export function statementReads<T>(read: ReadRows, rowOf: (row: unknown[]) => T): ListingReads<T> {
  return {
    async count(plan, query) {
      if (!plan.counted) return boundedOf((await read(boundedCountStatement(plan))).map(([n]) => ({ n: Number(n) })));
      return countedOf(
        (await read(countStatement(query))).map(([total, unfolded]) => ({
          total: Number(total),
          unfolded: Number(unfolded),
        })),
      );
    },
    page: async (plan, window) => (await read(pageStatement(plan, window))).map(rowOf),
    days: async (statuses, fromEnd, past, days) =>
      (await read(dayCountsStatement(statuses, fromEnd, past, days))).map(([day, n]) => ({
        day: String(day),
        n: Number(n),
      })),
  };
}

/**
 * The statements of a listing page, each run by `reads` (the service's and the raw baseline's
 * alike); `order` is listing order on the rows (the join by primary key does not keep it).
 */
export async function readListing<T>(
  reads: ListingReads<T>,
  query: ListFilter,
  limit: number,
  mode: ListMode,
  order: (a: T, b: T) => number,
): Promise<ListingRead<T>> {
  const plan = planList(query);
  const count = () => reads.count(plan, query);
  const rowsOf = async (window: PageWindow) => (await reads.page(plan, window)).sort(order);

  if ('after' in mode) {
    const [counted, rows] = await Promise.all([count(), rowsOf({ after: mode.after, skip: 0, take: limit + 1 })]);
    return { ...counted, rows: rows.slice(0, limit), hasMore: rows.length > limit };
  }
  const offset = (mode.page - 1) * limit;
  if (offset === 0) {
    // First page: both statements at once; without an exact total, one row more tells whether a page follows.
    const take = plan.counted ? limit : limit + 1;
    const [counted, rows] = await Promise.all([count(), rowsOf({ after: null, skip: 0, take })]);
    return {
      ...counted,
      rows: rows.slice(0, limit),
      hasMore: plan.counted ? rows.length < counted.total : rows.length > limit,
    };
  }
  const counted = await count();
  if (!counted.exact) {
    // Past the bound the total is not known: read forward, one row more.
    const rows = await rowsOf({ after: null, skip: offset, take: limit + 1 });
    return { ...counted, rows: rows.slice(0, limit), hasMore: rows.length > limit };
  }
  if (offset >= counted.total) return { ...counted, rows: [], hasMore: false };
  const rows = await rowsOf(await offsetWindow(reads.days, plan, offset, limit, counted.total));
  return { ...counted, rows, hasMore: offset + rows.length < counted.total };
}

/** A skip at least this long walks the day counts first: below it, stepping over entries is cheaper. */
export const DAY_JUMP_MIN = 1000;
const DAYS_PER_READ = 100;
const DAY_MS = 86_400_000;

/** The window of an offset page past the first, whose listing holds `total` jobs (offset < total). */
export async function offsetWindow(
  days: DayReads,
  plan: ListPlan,
  offset: number,
  limit: number,
  total: number,
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
    const days = await readDays(statuses, fromEnd, past, DAYS_PER_READ);
    for (const { day, n } of days) {
      if (passed + n > window.skip) {
        const start = new Date(`${day}T00:00:00.000Z`).getTime();
        return {
          ...window,
          skip: window.skip - passed,
          from: String(jobs.createdAt.mapToDriverValue(new Date(fromEnd ? start : start + DAY_MS))),
        };
      }
      passed += n;
    }
    if (days.length < DAYS_PER_READ) return window;
    past = days.at(-1)!.day;
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
const NARROWING: Narrowing[] = FILTER_NAMES.filter((name) => name !== 'status').map((name) => ({
  name,
  declared: LIST_FILTERS[name],
  column: columnOf(LIST_FILTERS[name].column),
}));

/** Listing order, or its reverse for a window counted from the end. */
const listingOrder = (fromEnd: boolean) =>
  fromEnd ? [asc(jobs.createdAt), asc(jobs.id)] : [desc(jobs.createdAt), desc(jobs.id)];

/** The schema's index for a lead and filter ('' for none), found by its columns: a missing one is a schema mistake, found at start-up. */
const INDEXES = (() => {
  const byColumns = new Map(
    getTableConfig(jobs).indexes.map((index) => [
      index.config.columns.map((column) => (column as MySqlColumn).name).join(),
      index.config.name,
    ]),
  );
  const found = new Map<string, string>();
  for (const [lead, leadColumn] of Object.entries(LEADS)) {
    for (const narrowing of [undefined, ...NARROWING]) {
      const key = [leadColumn, ...(narrowing ? [narrowing.column] : []), jobs.createdAt, jobs.id]
        .map((column) => column.name)
        .join();
      const name = byColumns.get(key);
      if (!name) throw new Error(`db/schema.ts has no index on (${key}) for listings`);
      found.set(`${lead}:${narrowing?.name ?? ''}`, name);
    }
  }
  return found;
})();

/** A plan's conditions, values as placeholders named in ListPlan.values. */
interface PlanConditions {
  /** One ordered range of the index per lead value x index filter value: its conditions on the index's leading columns. */
  ranges: SQL[];
  /** The other filters' conditions, checked on the rows each range reads. */
  checks: SQL[];
  /** Every condition at once, value lists as `in`: what a bounded count reads. */
  matching: SQL;
}

export interface ListPlan {
  /** The index every read of the page uses. */
  index: string;
  /** The values of the conditions' placeholders. */
  values: Record<string, unknown>;
  /** What the conditions' text depends on (the lead, each filter and its number of values): plans of one shape share prepared statements. */
  shape: string;
  /** The conditions, built when a statement of this shape is first prepared (and then kept by this plan). */
  conditions(): PlanConditions;
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

/** Named placeholders for values, numbered as they are bound: statements of one shape bind them in one order. */
function placeholders() {
  const values: Record<string, unknown> = {};
  let bound = 0;
  const bind = (value: unknown) => {
    const name = `v${bound++}`;
    values[name] = value;
    return sql.placeholder(name);
  };
  return { values, bind };
}

const among = (column: MySqlColumn, values: readonly unknown[]) => inArray(column, [...values]);
const oneOf = (column: MySqlColumn, values: readonly unknown[]) =>
  values.length === 1 ? eq(column, values[0]) : among(column, values);

/** The plan for a listing's filters; paging comes later. */
export function planList(query: ListFilter): ListPlan {
  // Asking for active and open is asking for the default listing: one read of `listed`.
  const listed = !query.status || sameSet(query.status, DEFAULT_STATUSES);
  const lead: Lead = listed ? 'listed' : 'status';
  const leadColumn = LEADS[lead];
  const leadValues: readonly unknown[] = listed ? [true] : query.status!;
  // Each value gets its placeholder's name: the lead's `lead0`..., a filter's `type0`...
  const values: Record<string, unknown> = {};
  const name = (prefix: string) => (value: unknown, i: number) => {
    values[`${prefix}${i}`] = value;
    return `${prefix}${i}`;
  };
  const leadNames = leadValues.map(name('lead'));
  const used = NARROWING.flatMap((narrowing) => {
    const given = valuesOf(narrowing, query);
    return given ? [{ narrowing, names: given.map(name(narrowing.name)) }] : [];
  });
  // The index of the filter that matches fewest jobs; the others are checked on its rows.
  const share = ({ narrowing, names }: (typeof used)[number]) => names.length * narrowing.declared.percentPerValue;
  const chosen = used.reduce<(typeof used)[number] | undefined>(
    (best, next) => (best === undefined || share(next) < share(best) ? next : best),
    undefined,
  );
  const others = used.filter((filter) => filter !== chosen);

  let built: PlanConditions | undefined;
  const conditions = (): PlanConditions => {
    // A filter's value as the column stores it: folded (lower) for a text filter.
    const stored = ({ narrowing }: (typeof used)[number], named: string) =>
      narrowing.declared.kind === 'text' ? sql`lower(${sql.placeholder(named)})` : sql.placeholder(named);
    const leads = leadNames.map((named) => sql.placeholder(named));
    const checks = others.map((filter) =>
      oneOf(
        filter.narrowing.column,
        filter.names.map((named) => stored(filter, named)),
      ),
    );
    return {
      ranges: chosen
        ? leads.flatMap((value) =>
            chosen.names.map((one) => and(eq(leadColumn, value), eq(chosen.narrowing.column, stored(chosen, one)))!),
          )
        : leads.map((value) => eq(leadColumn, value)),
      checks,
      matching: and(
        oneOf(leadColumn, leads),
        ...(chosen
          ? [
              oneOf(
                chosen.narrowing.column,
                chosen.names.map((named) => stored(chosen, named)),
              ),
            ]
          : []),
        ...checks,
      )!,
    };
  };
  return {
    index: INDEXES.get(`${lead}:${chosen?.narrowing.name ?? ''}`)!,
    values,
    shape: [
      `${lead}${leadNames.length}`,
      ...used.map(({ narrowing, names }) => `${narrowing.name}${names.length}`),
    ].join(),
    conditions: () => (built ??= conditions()),
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

/** The window's conditions beyond the plan's: strictly after its position, and from where its read starts. */
function windowConditions(window: PageWindow): SQL[] {
  const conditions: SQL[] = [];
  if (window.after) {
    const [at, id] = [sql.placeholder('afterAt'), sql.placeholder('afterId')];
    conditions.push(or(lt(jobs.createdAt, at), and(eq(jobs.createdAt, at), lt(jobs.id, id)))!);
  }
  if (window.from !== undefined)
    conditions.push(
      window.fromEnd === true
        ? gte(jobs.createdAt, sql.placeholder('from'))
        : lt(jobs.createdAt, sql.placeholder('from')),
    );
  return conditions;
}

/** What a page statement's text depends on beyond its plan's shape. */
const windowShape = (window: PageWindow) =>
  [
    window.after ? 'after' : '',
    window.from === undefined ? '' : 'from',
    window.fromEnd === true ? 'fromEnd' : '',
  ].join();

/** The page statement's values: the plan's, then the window's (placeholders are not encoded by their column: the driver's values). */
function pageValues(plan: ListPlan, window: PageWindow): Record<string, unknown> {
  return {
    ...plan.values,
    ...(window.after
      ? {
          afterAt: jobs.createdAt.mapToDriverValue(window.after.createdAt),
          afterId: jobs.id.mapToDriverValue(window.after.id),
        }
      : {}),
    ...(window.from === undefined ? {} : { from: window.from }),
    take: window.take,
    skip: window.skip,
    reach: window.skip + window.take,
  };
}

/**
 * The page's rows in one statement: the ids of the window from the plan's index (each range read
 * in order, their union cut to the window when there are several), then those rows by primary key.
 */
function pageQuery(db: Database, plan: ListPlan, window: PageWindow) {
  const order = listingOrder(window.fromEnd === true);
  const within = windowConditions(window);
  const { ranges, checks } = plan.conditions();
  const pageId = sql<string>`${jobs.id}`.as('page_id');
  const range = (conditions: SQL) => and(conditions, ...checks, ...within);
  const [take, skip] = [sql.placeholder('take'), sql.placeholder('skip')];
  let ids;
  if (ranges.length === 1) {
    ids = db
      .select({ pageId })
      .from(jobs, { forceIndex: plan.index })
      .where(range(ranges[0]!))
      .orderBy(...order)
      .limit(take)
      .offset(skip)
      .as('page_ids');
  } else {
    // Each range's first skip + take in order; the window is then cut from their union (drizzle's unionAll would nest a third one in parentheses).
    const reads = ranges.map((one) =>
      db
        .select({ pageId, createdAt: jobs.createdAt })
        .from(jobs, { forceIndex: plan.index })
        .where(range(one))
        .orderBy(...order)
        .limit(sql.placeholder('reach')),
    );
    const union = sql`(${sql.join(reads, sql` union all `)}) ${sql.identifier('matches')}`;
    const [createdAt, id] = [sql.identifier(jobs.createdAt.name), sql.identifier('page_id')];
    ids = db
      .select({ pageId: sql<string>`${id}`.as('page_id') })
      .from(union)
      .orderBy(
        ...(window.fromEnd === true ? [sql`${createdAt}`, sql`${id}`] : [sql`${createdAt} desc`, sql`${id} desc`]),
      )
      .limit(take)
      .offset(skip)
      .as('page_ids');
  }
  return db.select(publicColumns).from(ids).innerJoin(jobs, eq(jobs.id, ids.pageId));
}

/** The page statement as the driver takes it. */
export const pageStatement = (plan: ListPlan, window: PageWindow): Statement =>
  statementText(
    `page|${plan.shape}|${windowShape(window)}`,
    () => pageQuery(textOnly, plan, window),
    pageValues(plan, window),
  );

/** The job_counts column of a counted filter: the same key as its jobs column. */
function countedColumn(key: string): MySqlColumn {
  const column = (getTableColumns(jobCounts) as Record<string, MySqlColumn>)[key];
  if (!column) throw new Error(`domain/list-filters.ts counts ${key} in job_counts, which has no such column`);
  return column;
}

/** The counted value filters with their job_counts columns; the counted text filter (department) has rows of its own (by_department). */
const COUNTED_VALUES = NARROWING.filter(({ declared }) => declared.counted && declared.kind !== 'text').map(
  (narrowing) => ({ ...narrowing, counts: countedColumn(narrowing.declared.column) }),
);

/** The counted filters' values, in the order countQuery names them; the shape of its text. */
function countValues(query: ListFilter) {
  const { values, bind } = placeholders();
  const department = query.department === undefined ? undefined : bind(query.department);
  const statuses = (query.status ?? DEFAULT_STATUSES).map(bind);
  const filters = COUNTED_VALUES.flatMap(({ name, counts }) => {
    const given = query[name];
    return given === undefined || typeof given === 'string' ? [] : [{ name, counts, values: given.map(bind) }];
  });
  return {
    values,
    department,
    statuses,
    filters,
    shape: [
      department ? 'department' : '',
      statuses.length,
      ...filters.map(({ name, values }) => `${name}${values.length}`),
    ].join(),
  };
}

/** A listing's exact total from job_counts (kept by triggers on `jobs`, migrations 0008 and 0010), for a filter of counted filters only. */
function countQuery(db: Database, query: ListFilter) {
  const { department, statuses, filters } = countValues(query);
  return db
    .select({
      // SUMs of BIGINTs are DECIMALs: the pool reads DECIMALs as numbers (db/client.ts).
      total: sql<number>`coalesce(sum(${jobCounts.n}), 0)`.mapWith(Number),
      unfolded: sql<number>`coalesce(sum(${jobCounts.slot} <> 0), 0)`.mapWith(Number),
    })
    .from(jobCounts)
    .where(
      and(
        eq(jobCounts.byDepartment, department !== undefined),
        eq(jobCounts.departmentKey, department === undefined ? '' : sql`lower(${department})`),
        among(jobCounts.status, statuses),
        ...filters.map(({ counts, values }) => among(counts, values)),
      ),
    );
}

export function countStatement(query: ListFilter): Statement {
  const { shape, values } = countValues(query);
  return statementText(`count|${shape}`, () => countQuery(textOnly, query), values);
}

/** A listing's total counted on its index, up to one past COUNTED_UP_TO: a filter job_counts does not keep. */
function boundedCountQuery(db: Database, plan: ListPlan) {
  const matches = db
    .select({ one: sql`1`.as('one') })
    .from(jobs, { forceIndex: plan.index })
    .where(plan.conditions().matching)
    .limit(sql.placeholder('bound'))
    .as('matches');
  return db.select({ n: count() }).from(matches);
}

const boundedValues = (plan: ListPlan) => ({ ...plan.values, bound: COUNTED_UP_TO + 1 });

export const boundedCountStatement = (plan: ListPlan): Statement =>
  statementText(`bounded|${plan.shape}`, () => boundedCountQuery(textOnly, plan), boundedValues(plan));

/** The day counts' values in the order dayCountsQuery names them; the shape of its text. */
function dayValues(statuses: readonly string[], fromEnd: boolean, past: string | undefined, days: number) {
  const { values, bind } = placeholders();
  const named = { statuses: statuses.map(bind), past: past === undefined ? undefined : bind(past) };
  values.days = days;
  return {
    ...named,
    values,
    shape: [statuses.length, past === undefined ? '' : 'past', fromEnd ? 'fromEnd' : ''].join(),
  };
}

/** Up to `days` days of job_day_counts in listing order (newest first) or, `fromEnd`, oldest first, after `past` when given. */
function dayCountsQuery(db: Database, statuses: readonly string[], fromEnd: boolean, past: string | undefined) {
  const { day } = jobDayCounts;
  const named = dayValues(statuses, fromEnd, past, 0);
  return db
    .select({ day, n: sql<number>`sum(${jobDayCounts.n})`.mapWith(Number) })
    .from(jobDayCounts)
    .where(
      and(
        among(jobDayCounts.status, named.statuses),
        named.past === undefined ? undefined : fromEnd ? gt(day, named.past) : lt(day, named.past),
      ),
    )
    .groupBy(day)
    .orderBy(fromEnd ? asc(day) : desc(day))
    .limit(sql.placeholder('days'));
}

export function dayCountsStatement(
  statuses: readonly string[],
  fromEnd: boolean,
  past: string | undefined,
  days: number,
): Statement {
  const { shape, values } = dayValues(statuses, fromEnd, past, days);
  return statementText(`days|${shape}`, () => dayCountsQuery(textOnly, statuses, fromEnd, past), values);
}

export interface Counted {
  /** The total, or with `exact` false, COUNTED_UP_TO: at least that many. */
  total: number;
  exact: boolean;
  /** Connection rows among those summed: a fold would make the next total cheaper. */
  unfolded: number;
}

const countedOf = ([row]: Array<{ total: number; unfolded: number }>): Counted => ({
  total: row?.total ?? 0,
  exact: true,
  unfolded: row?.unfolded ?? 0,
});

const boundedOf = ([row]: Array<{ n: number }>): Counted => {
  const counted = row?.n ?? 0;
  return { total: Math.min(counted, COUNTED_UP_TO), exact: counted <= COUNTED_UP_TO, unfolded: 0 };
};

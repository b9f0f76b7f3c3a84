import { and, asc, count, desc, eq, getTableColumns, gt, gte, lt, or, sql, type SQL } from 'drizzle-orm';
import type { MySqlColumn } from 'drizzle-orm/mysql-core';
import { COUNTED_UP_TO, type ListFilter } from '../../../domain/list-filters';
import { DEFAULT_STATUSES } from '../../../domain/job';
import { jobCounts, jobDayCounts, jobs } from '../../schema';
import { qb, select, type Build, type Queryable, type Statement } from '../../sql';
import { jobColumns } from '../job-columns';
import { among, NARROWING, type ListPlan } from './plan';

/** The statements of a listing, built per call with their values: the page, its total and the day counts. */

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
  /** Where the read starts: only rows created before it, or with `fromEnd` at or after it. */
  from?: Date;
}

/** Listing order, or its reverse for a window counted from the end. */
const listingOrder = (fromEnd: boolean) =>
  fromEnd ? [asc(jobs.createdAt), asc(jobs.id)] : [desc(jobs.createdAt), desc(jobs.id)];

/** The window's conditions beyond the plan's: strictly after its position, and from where its read starts. */
function windowConditions({ after, from, fromEnd }: PageWindow): SQL[] {
  const conditions: SQL[] = [];
  if (after)
    conditions.push(
      or(lt(jobs.createdAt, after.createdAt), and(eq(jobs.createdAt, after.createdAt), lt(jobs.id, after.id)))!,
    );
  if (from !== undefined) conditions.push(fromEnd === true ? gte(jobs.createdAt, from) : lt(jobs.createdAt, from));
  return conditions;
}

/**
 * The page's rows in one statement: the ids of the window from the plan's index (each range read
 * in order, their union cut to the window when there are several), then those rows by primary key.
 */
function pageBuild(plan: ListPlan, window: PageWindow): Build<typeof jobColumns> {
  const fromEnd = window.fromEnd === true;
  const order = listingOrder(fromEnd);
  const within = windowConditions(window);
  const pageId = sql<string>`${jobs.id}`.as('page_id');
  const range = (conditions: SQL) => and(conditions, ...plan.checks, ...within);
  let ids;
  if (plan.ranges.length === 1) {
    ids = qb
      .select({ pageId })
      .from(jobs, { forceIndex: plan.index })
      .where(range(plan.ranges[0]!))
      .orderBy(...order)
      .limit(window.take)
      .offset(window.skip)
      .as('page_ids');
  } else {
    // Each range's first skip + take in order; the window is then cut from their union (drizzle's unionAll would nest a third one in parentheses).
    const reads = plan.ranges.map((one) =>
      qb
        .select({ pageId, createdAt: jobs.createdAt })
        .from(jobs, { forceIndex: plan.index })
        .where(range(one))
        .orderBy(...order)
        .limit(window.skip + window.take),
    );
    const union = sql`(${sql.join(reads, sql` union all `)}) ${sql.identifier('matches')}`;
    const [createdAt, id] = [sql.identifier(jobs.createdAt.name), sql.identifier('page_id')];
    ids = qb
      .select({ pageId: sql<string>`${id}`.as('page_id') })
      .from(union)
      .orderBy(...(fromEnd ? [sql`${createdAt}`, sql`${id}`] : [sql`${createdAt} desc`, sql`${id} desc`]))
      .limit(window.take)
      .offset(window.skip)
      .as('page_ids');
  }
  return (query) => query.from(ids).innerJoin(jobs, eq(jobs.id, ids.pageId));
}

/** The window's rows, in no particular order (the join by primary key does not keep the listing's). */
export const readPage = (on: Queryable, plan: ListPlan, window: PageWindow) =>
  select(on, jobColumns, pageBuild(plan, window));

/** The page statement as the driver takes it: for EXPLAIN. */
export const pageStatement = (plan: ListPlan, window: PageWindow): Statement =>
  pageBuild(plan, window)(qb.select(jobColumns)).toSQL();

export interface Counted {
  /** The total, or with `exact` false, COUNTED_UP_TO: at least that many. */
  total: number;
  exact: boolean;
}

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

// SUMs of BIGINTs are DECIMALs: the pool reads DECIMALs as numbers (db/client.ts).
const totalColumns = { total: sql<number>`coalesce(sum(${jobCounts.n}), 0)` };

/** A listing's exact total from job_counts (kept by triggers on `jobs`, migrations 0008 and 0010): its folded row and the connection rows not folded yet alike. */
function totalBuild(query: ListFilter): Build<typeof totalColumns> {
  const { department } = query;
  const filters = COUNTED_VALUES.flatMap(({ name, counts }) => {
    const given = query[name];
    return given === undefined || typeof given === 'string' ? [] : [among(counts, given)];
  });
  return (select) =>
    select
      .from(jobCounts)
      .where(
        and(
          eq(jobCounts.byDepartment, department !== undefined),
          eq(jobCounts.departmentKey, department === undefined ? '' : sql`lower(${department})`),
          among(jobCounts.status, query.status ?? DEFAULT_STATUSES),
          ...filters,
        ),
      );
}

const boundedColumns = { n: count() };

/** A listing's total counted on its index, up to one past COUNTED_UP_TO: a filter job_counts does not keep. */
function boundedBuild(plan: ListPlan): Build<typeof boundedColumns> {
  const matches = qb
    .select({ one: sql`1`.as('one') })
    .from(jobs, { forceIndex: plan.index })
    .where(plan.matching)
    .limit(COUNTED_UP_TO + 1)
    .as('matches');
  return (select) => select.from(matches);
}

/** A listing's total: exact from job_counts when the plan is counted, else counted on its index up to COUNTED_UP_TO. */
export async function readTotal(on: Queryable, plan: ListPlan, query: ListFilter): Promise<Counted> {
  if (plan.counted) {
    const [row] = await select(on, totalColumns, totalBuild(query));
    return { total: row?.total ?? 0, exact: true };
  }
  const [row] = await select(on, boundedColumns, boundedBuild(plan));
  const counted = row?.n ?? 0;
  return { total: Math.min(counted, COUNTED_UP_TO), exact: counted <= COUNTED_UP_TO };
}

/** One day of job_day_counts for some statuses: its date (YYYY-MM-DD) and their jobs created that day. */
export interface DayCount {
  day: string;
  n: number;
}

/** Up to `days` days of job_day_counts for `statuses` in listing order (or, `fromEnd`, oldest first), after `past` when given. */
export interface DaysAsked {
  statuses: readonly string[];
  fromEnd: boolean;
  past: string | undefined;
  days: number;
}

const dayColumns = { day: jobDayCounts.day, n: sql<number>`sum(${jobDayCounts.n})` };

function daysBuild({ statuses, fromEnd, past, days }: DaysAsked): Build<typeof dayColumns> {
  const { day } = jobDayCounts;
  return (select) =>
    select
      .from(jobDayCounts)
      .where(
        and(
          among(jobDayCounts.status, statuses),
          past === undefined ? undefined : fromEnd ? gt(day, past) : lt(day, past),
        ),
      )
      .groupBy(day)
      .orderBy(fromEnd ? asc(day) : desc(day))
      .limit(days);
}

export const readDays = (on: Queryable, asked: DaysAsked): Promise<DayCount[]> =>
  select(on, dayColumns, daysBuild(asked));

/** The day counts' statement as the driver takes it: for EXPLAIN. */
export const daysStatement = (asked: DaysAsked): Statement => daysBuild(asked)(qb.select(dayColumns)).toSQL();

import { and, asc, count, desc, eq, getTableColumns, gt, gte, lt, or, sql, type SQL } from 'drizzle-orm';
import type { MySqlColumn } from 'drizzle-orm/mysql-core';
import { COUNTED_UP_TO, type ListFilter } from '../../../domain/list-filters';
import { DEFAULT_STATUSES } from '../../../domain/job';
import { jobCounts, jobDayCounts, jobs } from '../../schema';
import { bind, bound, perShape, prepare, qb, query, type Queryable, type Statement, type Values } from '../../sql';
import { jobColumns } from '../job-columns';
import { among, NARROWING, placeholders, planConditions, valuesFor, type ListPlan, type PlanShape } from './plan';

/** The statements of a listing, compiled once per shape: the page, its total and the day counts. */

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

/** What a page statement's text depends on beyond its plan's: which of the window's parts are given. */
interface WindowShape {
  after: boolean;
  from: boolean;
  fromEnd: boolean;
}

const shapeOf = ({ after, from, fromEnd }: PageWindow): WindowShape => ({
  after: after !== null,
  from: from !== undefined,
  fromEnd: fromEnd === true,
});

/** The window's values, for the page statement's placeholders. */
const windowValues = ({ after, from, skip, take }: PageWindow): Values => ({
  afterCreatedAt: after?.createdAt,
  afterId: after?.id,
  from,
  skip,
  take,
  upTo: skip + take,
});

/** The window's conditions beyond the plan's: strictly after its position, and from where its read starts. */
function windowConditions({ after, from, fromEnd }: WindowShape): SQL[] {
  const conditions: SQL[] = [];
  if (after) {
    const [createdAt, id] = [bound('afterCreatedAt', jobs.createdAt), bound('afterId', jobs.id)];
    conditions.push(or(lt(jobs.createdAt, createdAt), and(eq(jobs.createdAt, createdAt), lt(jobs.id, id)))!);
  }
  if (from) {
    const start = bound('from', jobs.createdAt);
    conditions.push(fromEnd ? gte(jobs.createdAt, start) : lt(jobs.createdAt, start));
  }
  return conditions;
}

/**
 * The page's rows in one statement: the ids of the window from the plan's index (each range read
 * in order, their union cut to the window when there are several), then those rows by primary key.
 */
const pageCompiled = perShape(({ plan, window }: { plan: PlanShape; window: WindowShape }) => {
  const { index, ranges, checks } = planConditions(plan);
  const order = listingOrder(window.fromEnd);
  const within = windowConditions(window);
  const [skip, take, upTo] = [sql.placeholder('skip'), sql.placeholder('take'), sql.placeholder('upTo')];
  const pageId = sql<string>`${jobs.id}`.as('page_id');
  const range = (conditions: SQL) => and(conditions, ...checks, ...within);
  let ids;
  if (ranges.length === 1) {
    ids = qb
      .select({ pageId })
      .from(jobs, { forceIndex: index })
      .where(range(ranges[0]!))
      .orderBy(...order)
      .limit(take)
      .offset(skip)
      .as('page_ids');
  } else {
    // Each range's first skip + take in order; the window is then cut from their union (drizzle's unionAll would nest a third one in parentheses).
    const reads = ranges.map((one) =>
      qb
        .select({ pageId, createdAt: jobs.createdAt })
        .from(jobs, { forceIndex: index })
        .where(range(one))
        .orderBy(...order)
        .limit(upTo),
    );
    const union = sql`(${sql.join(reads, sql` union all `)}) ${sql.identifier('matches')}`;
    const [createdAt, id] = [sql.identifier(jobs.createdAt.name), sql.identifier('page_id')];
    ids = qb
      .select({ pageId: sql<string>`${id}`.as('page_id') })
      .from(union)
      .orderBy(...(window.fromEnd ? [sql`${createdAt}`, sql`${id}`] : [sql`${createdAt} desc`, sql`${id} desc`]))
      .limit(take)
      .offset(skip)
      .as('page_ids');
  }
  return prepare(jobColumns, (select) => select.from(ids).innerJoin(jobs, eq(jobs.id, ids.pageId)));
});

/** The window's rows, in no particular order (the join by primary key does not keep the listing's). */
export const readPage = (on: Queryable, plan: ListPlan, window: PageWindow) =>
  query(on, pageCompiled({ plan: plan.shape, window: shapeOf(window) }), { ...plan.values, ...windowValues(window) });

/** The page statement as the driver takes it: for EXPLAIN. */
export const pageStatement = (plan: ListPlan, window: PageWindow): Statement =>
  bind(pageCompiled({ plan: plan.shape, window: shapeOf(window) }), { ...plan.values, ...windowValues(window) });

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

/** What a total's text depends on: whether a department is given, and how many values each counted filter has. */
interface TotalShape {
  department: boolean;
  statuses: number;
  filters: Array<[string, number]>;
}

/** A listing's exact total from job_counts (kept by triggers on `jobs`, migrations 0008 and 0010): its folded row and the connection rows not folded yet alike. */
const totalCompiled = perShape(({ department, statuses, filters }: TotalShape) =>
  prepare(totalColumns, (select) =>
    select.from(jobCounts).where(
      and(
        eq(jobCounts.byDepartment, department),
        eq(jobCounts.departmentKey, department ? sql`lower(${sql.placeholder('department')})` : ''),
        among(jobCounts.status, placeholders('status', statuses, jobCounts.status)),
        ...filters.map(([name, count]) => {
          const { counts } = COUNTED_VALUES.find((counted) => counted.name === name)!;
          return among(counts, placeholders(name, count, counts));
        }),
      ),
    ),
  ),
);

const boundedColumns = { n: count() };

/** A listing's total counted on its index, up to one past COUNTED_UP_TO: a filter job_counts does not keep. */
const boundedCompiled = perShape((plan: PlanShape) => {
  const { index, matching } = planConditions(plan);
  const matches = qb
    .select({ one: sql`1`.as('one') })
    .from(jobs, { forceIndex: index })
    .where(matching)
    .limit(COUNTED_UP_TO + 1)
    .as('matches');
  return prepare(boundedColumns, (select) => select.from(matches));
});

/** A listing's total: exact from job_counts when the plan is counted, else counted on its index up to COUNTED_UP_TO. */
export async function readTotal(on: Queryable, plan: ListPlan, filter: ListFilter): Promise<Counted> {
  if (plan.counted) {
    const { department } = filter;
    const statuses = filter.status ?? DEFAULT_STATUSES;
    const given = COUNTED_VALUES.flatMap(({ name }) => {
      const values = filter[name];
      return values === undefined || typeof values === 'string' ? [] : [[name, values] as const];
    });
    const shape = {
      department: department !== undefined,
      statuses: statuses.length,
      filters: given.map(([name, values]): [string, number] => [name, values.length]),
    };
    const values = Object.assign(
      { department },
      valuesFor('status', statuses),
      ...given.map(([name, list]) => valuesFor(name, list)),
    ) as Values;
    const [row] = await query(on, totalCompiled(shape), values);
    return { total: row?.total ?? 0, exact: true };
  }
  const [row] = await query(on, boundedCompiled(plan.shape), plan.values);
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

/** Day counts' statement per shape: how many statuses, which way, and whether it starts past a day. */
const daysCompiled = perShape(({ statuses, fromEnd, past }: { statuses: number; fromEnd: boolean; past: boolean }) => {
  const { day } = jobDayCounts;
  const pastDay = sql.placeholder('past');
  return prepare(dayColumns, (select) =>
    select
      .from(jobDayCounts)
      .where(
        and(
          among(jobDayCounts.status, placeholders('status', statuses, jobDayCounts.status)),
          past ? (fromEnd ? gt(day, pastDay) : lt(day, pastDay)) : undefined,
        ),
      )
      .groupBy(day)
      .orderBy(fromEnd ? asc(day) : desc(day))
      .limit(sql.placeholder('days')),
  );
});

const daysOf = ({ statuses, fromEnd, past, days }: DaysAsked) =>
  [
    daysCompiled({ statuses: statuses.length, fromEnd, past: past !== undefined }),
    { ...valuesFor('status', statuses), past, days },
  ] as const;

export const readDays = (on: Queryable, asked: DaysAsked): Promise<DayCount[]> => query(on, ...daysOf(asked));

/** The day counts' statement as the driver takes it: for EXPLAIN. */
export const daysStatement = (asked: DaysAsked): Statement => bind(...daysOf(asked));

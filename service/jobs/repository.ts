import { and, eq, is, isNull, ne, or, Placeholder, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { primaryOf } from '../../db/replicas';
import { jobs, type NewJobRow } from '../../db/schema';

import { publicColumns, type PublicJobRow } from './columns';
import { offsetWindow } from './deep-page';
import { countedOf, countStatement, foldSoon } from './job-counts';
import { queryBuilder, readerOf, readRows, ReadQuery, toPublicRow, type Statement } from './job-rows';
import { pageStatement, planList, type ListPosition, type PageWindow } from './list-plan';
import type { ListQuery } from './list-query';

export type { ListPosition } from './list-plan';

/** Offset pages (`page`), or a keyset walk after a position (`after`, null for the top). */
export type ListMode = { page: number } | { after: ListPosition | null };

export interface JobPage {
  rows: PublicJobRow[];
  total: number;
  /** Whether a job follows the last row (in the same snapshot for a keyset walk). */
  hasMore: boolean;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Listing order (newest first, then the larger id) on the page's rows, which the join by primary key does not promise. */
export const byListingOrder = (a: PublicJobRow, b: PublicJobRow) => compare(b.createdAt, a.createdAt) || compare(b.id, a.id);

const toRows = (rows: unknown[][]) => rows.map(toPublicRow).sort(byListingOrder);

/**
 * The two statements behind a listing page, as read from the top (exported so the EXPLAIN tests
 * read the plans of what runs): the total from job_counts (job-counts.ts), and the page from the
 * filter's index (list-plan.ts). A keyset page reads one more row than it shows, to know whether
 * another page follows. listJobs reads deep offset pages from the nearer end and, for
 * status-only listings, from their day (deep-page.ts).
 */
export function listQueries(db: Database, query: ListQuery, mode: ListMode = { page: query.page }) {
  const offset = 'after' in mode ? 0 : (mode.page - 1) * query.limit;
  const window = 'after' in mode ? { after: mode.after, skip: 0, take: query.limit + 1 } : { after: null, skip: offset, take: query.limit };
  return {
    offset,
    count: new ReadQuery(db, countStatement(query), countedOf),
    page: new ReadQuery(db, pageStatement(planList(query), window), toRows),
  };
}

export async function listJobs(db: Database, query: ListQuery, mode: ListMode = { page: query.page }): Promise<JobPage> {
  const counted = async (reader: Database) => {
    const { total, unfolded } = await new ReadQuery(reader, countStatement(query), countedOf);
    // Connection rows were summed: fold them (in the background, on the primary) so totals stay cheap.
    if (unfolded > 0) foldSoon(primaryOf(db));
    return total;
  };
  const plan = planList(query);
  const page = (reader: Database, window: PageWindow) => new ReadQuery(reader, pageStatement(plan, window), toRows);

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
  // Stryker disable next-line EqualityOperator,BooleanLiteral: at offset = total the window takes 0 rows; an empty page has no row to continue after
  if (offset >= total) return { rows: [], total, hasMore: false };
  const window = await offsetWindow((statement) => readRows(reader, statement), plan, offset, query.limit, total);
  const rows = await page(reader, window);
  return { rows, total, hasMore: offset + rows.length < total };
}

/** A statement built once, with the values of its named placeholders filled in per call. */
function compile(builder: { toSQL(): Statement }) {
  const { sql: text, params } = builder.toSQL();
  const fill = params.map((param) => (is(param, Placeholder) ? (values: Record<string, unknown>) => values[param.name] : () => param));
  return (values: Record<string, unknown>): Statement => ({ sql: text, params: fill.map((value) => value(values)) });
}

/**
 * One job as its reader may see it: never soft-deleted, and a draft only by the consumer that
 * created it (compared in SQL, so the creator column is never read out; without a consumer the
 * comparison is with NULL, which matches no draft). Built once, at load.
 */
const byId = compile(
  queryBuilder
    .select(publicColumns)
    .from(jobs)
    .where(
      and(
        eq(jobs.id, sql.placeholder('id')),
        isNull(jobs.deletedAt),
        or(ne(jobs.status, 'draft'), eq(jobs.createdByConsumer, sql.placeholder('consumer'))),
      ),
    )
    .limit(1),
);

export async function findJob(db: Database, id: string, consumerId: string | undefined): Promise<PublicJobRow | undefined> {
  const [row] = await readRows(db, byId({ id: jobs.id.mapToDriverValue(id), consumer: consumerId ?? null }));
  return row && toPublicRow(row);
}

export async function insertJob(db: Database, row: NewJobRow): Promise<void> {
  await db.insert(jobs).values(row);
}

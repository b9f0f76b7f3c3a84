import { and, count, desc, eq, inArray, isNull, lt, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { jobs, type NewJobRow } from '../../db/schema';

import { publicColumns, type PublicJobRow } from './columns';
import type { ListQuery } from './list-query';

function listConditions(query: ListQuery): SQL | undefined {
  return and(
    // Without a status filter the default listing is exactly the generated `listed` column,
    // which has its own index in listing order.
    query.status ? inArray(jobs.visibleStatus, query.status) : eq(jobs.listed, true),
    query.type ? inArray(jobs.type, query.type) : undefined,
    query.workplace ? inArray(jobs.workplace, query.workplace) : undefined,
    // Folded by the database on both sides, so the match is exactly the column's definition.
    query.department ? eq(jobs.departmentKey, sql`lower(${query.department})`) : undefined,
  );
}

/** A place in the listing order (createdAt desc, id desc): a cursor resumes after it. */
export interface ListPosition {
  createdAt: Date;
  id: string;
}

/** Offset pages (`page`), or a keyset walk after a position (`after`, null for the top). */
export type ListMode = { page: number } | { after: ListPosition | null };

export interface JobPage {
  rows: PublicJobRow[];
  total: number;
  /** Whether a job follows the last row (in the same snapshot for a keyset walk). */
  hasMore: boolean;
}

/** Jobs strictly after `position` in listing order. */
function after(position: ListPosition): SQL | undefined {
  return or(
    lt(jobs.createdAt, position.createdAt),
    and(eq(jobs.createdAt, position.createdAt), lt(jobs.id, position.id)),
  );
}

/** Listing order on the page's rows, which the deferred join below does not promise. */
const byListingOrder = (a: PublicJobRow, b: PublicJobRow) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1;

/**
 * The two queries behind a listing page (exported so the benchmark and the EXPLAIN tests can
 * read their plans). A keyset page reads one more row than it shows, to know whether another
 * page follows. Its ids come from the filter's index alone (a range read in listing order that
 * stops after limit + 1 entries, whatever the depth), then the rows by primary key: asked for
 * the full rows at once, MariaDB 10.11 prefers reading the whole `listed = 1` prefix backwards,
 * which costs as much as the walk is deep.
 */
export function listQueries(db: Database, query: ListQuery, mode: ListMode = { page: query.page }) {
  const where = listConditions(query);
  const counted = db.select({ total: count() }).from(jobs).where(where);
  if ('after' in mode) {
    const ids = db
      .select({ id: jobs.id })
      .from(jobs)
      .where(and(where, mode.after ? after(mode.after) : undefined))
      .orderBy(desc(jobs.createdAt), desc(jobs.id))
      .limit(query.limit + 1)
      .as('page_ids');
    return { offset: 0, count: counted, page: db.select(publicColumns).from(ids).innerJoin(jobs, eq(jobs.id, ids.id)) };
  }
  const offset = (mode.page - 1) * query.limit;
  return {
    offset,
    count: counted,
    page: db
      .select(publicColumns)
      .from(jobs)
      .where(where)
      .orderBy(desc(jobs.createdAt), desc(jobs.id))
      .limit(query.limit)
      .offset(offset),
  };
}

export async function listJobs(db: Database, query: ListQuery, mode: ListMode = { page: query.page }): Promise<JobPage> {
  const queries = listQueries(db, query, mode);
  if ('after' in mode) {
    const [[counted], rows] = await Promise.all([queries.count, queries.page]);
    rows.sort(byListingOrder);
    return { rows: rows.slice(0, query.limit), total: counted?.total ?? 0, hasMore: rows.length > query.limit };
  }
  if (queries.offset === 0) {
    // First page: both queries at once.
    const [[counted], rows] = await Promise.all([queries.count, queries.page]);
    const total = counted?.total ?? 0;
    return { rows, total, hasMore: rows.length < total };
  }
  // Later pages: skip the page query when it is past the end, where OFFSET would still scan.
  const [counted] = await queries.count;
  const total = counted?.total ?? 0;
  const rows = queries.offset >= total ? [] : await queries.page;
  return { rows, total, hasMore: queries.offset + rows.length < total };
}

/**
 * One job as its reader may see it: never soft-deleted, and a draft only by the consumer that
 * created it (compared in SQL, so the creator column is never read out).
 */
export async function findJob(db: Database, id: string, consumerId: string | undefined): Promise<PublicJobRow | undefined> {
  const [row] = await db
    .select(publicColumns)
    .from(jobs)
    .where(
      and(
        eq(jobs.id, id),
        isNull(jobs.deletedAt),
        consumerId === undefined
          ? ne(jobs.status, 'draft')
          : or(ne(jobs.status, 'draft'), eq(jobs.createdByConsumer, consumerId)),
      ),
    )
    .limit(1);
  return row;
}

export async function insertJob(db: Database, row: NewJobRow): Promise<void> {
  await db.insert(jobs).values(row);
}

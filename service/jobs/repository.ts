import { and, count, desc, eq, inArray, isNull, ne, or, sql, type SQL } from 'drizzle-orm';
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

export interface JobPage {
  rows: PublicJobRow[];
  total: number;
}

/** The two queries behind a listing page (exported so the benchmark can EXPLAIN them). */
export function listQueries(db: Database, query: ListQuery) {
  const where = listConditions(query);
  const offset = (query.page - 1) * query.limit;
  return {
    offset,
    count: db.select({ total: count() }).from(jobs).where(where),
    page: db
      .select(publicColumns)
      .from(jobs)
      .where(where)
      .orderBy(desc(jobs.createdAt), desc(jobs.id))
      .limit(query.limit)
      .offset(offset),
  };
}

export async function listJobs(db: Database, query: ListQuery): Promise<JobPage> {
  const queries = listQueries(db, query);
  const page = () => queries.page as unknown as Promise<PublicJobRow[]>;
  if (queries.offset === 0) {
    // First page: both queries at once.
    const [[counted], rows] = await Promise.all([queries.count, page()]);
    return { rows, total: counted?.total ?? 0 };
  }
  // Later pages: skip the page query when it is past the end, where OFFSET would still scan.
  const [counted] = await queries.count;
  const total = counted?.total ?? 0;
  return { rows: queries.offset >= total ? [] : await page(), total };
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
  return row as PublicJobRow | undefined;
}

export async function insertJob(db: Database, row: NewJobRow): Promise<void> {
  await db.insert(jobs).values(row);
}


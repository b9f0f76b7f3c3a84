import { and, eq, isNull, ne, or, sql } from 'drizzle-orm';
import type { Job, Salary } from '../../service/jobs/contract/job';
import type { Database } from '../client';
import { jobs, type NewJobRow } from '../schema';
import { compile, queryBuilder, readRows, runStatement, type Statement } from '../sql';
import { uuidv7 } from '../schema';
import { publicColumns, rowToJob } from './job-columns';

/**
 * One job as its reader may see it: never soft-deleted, and a draft only by the consumer that
 * created it (compared in SQL, so the creator column is never read out; without a consumer the
 * comparison is with NULL, which matches no draft). Built once, at load, and decoded by rowToJob:
 * a drizzle prepared statement measured ~25 us more CPU per call (docs/decisions.md).
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

export async function findJob(db: Database, id: string, consumerId: string | undefined): Promise<Job | undefined> {
  const [row] = await readRows(db, byId({ id: jobs.id.mapToDriverValue(id), consumer: consumerId ?? null }));
  return row && rowToJob(row);
}

/** A create's fields as the contract has them: the row's own columns, with the salary as one object. */
export type NewJob = Omit<NewJobRow, 'id' | 'createdAt' | 'createdByConsumer' | Extract<keyof NewJobRow, `salary${string}`>> & {
  salary?: Salary | null;
};

type NewRow = Record<string, unknown>;

/**
 * The insert of a row with these columns, compiled once per shape: the optional fields a body
 * sends vary, and a NULL is written as such (a column's encoder would turn it into text).
 */
const inserts = new Map<string, (values: NewRow) => Statement>();
function insertOf(db: Database, row: NewRow): Statement {
  const columns = Object.keys(row).filter((key) => row[key] !== undefined);
  const shape = columns.map((key) => (row[key] === null ? `${key}=null` : key)).join();
  let insert = inserts.get(shape);
  if (!insert) {
    const values = Object.fromEntries(columns.map((key) => [key, row[key] === null ? null : sql.placeholder(key)]));
    insert = compile(db.insert(jobs).values(values as unknown as NewJobRow));
    inserts.set(shape, insert);
  }
  return insert(row);
}

/**
 * Stores a new job and returns its id. Everything not settable through the API (rates, client,
 * vendor, recruiter) stays unset for a recruiter to fill in later. `db` is the primary or the
 * transaction of the request's Idempotency-Key.
 */
export async function insertJob(db: Database, { salary = null, ...fields }: NewJob, consumerId: string, now = new Date()): Promise<string> {
  const id = uuidv7(now);
  const row: NewJobRow = {
    ...fields,
    id,
    salaryDisclosed: salary !== null,
    salaryMin: salary?.min ?? null,
    salaryMax: salary?.max ?? null,
    salaryCurrency: salary?.currency ?? null,
    createdAt: now,
    createdByConsumer: consumerId,
  };
  await runStatement(db, insertOf(db, row));
  return id;
}

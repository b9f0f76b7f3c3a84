import { and, eq, isNull, ne, or, sql } from 'drizzle-orm';
import type { Job, Salary } from '../../domain/job';
import { uuidv7 } from '../../domain/uuid';
import type { MySqlInsertValue } from 'drizzle-orm/mysql-core';
import { jobs, type NewJobRow } from '../schema';
import {
  bound,
  perShape,
  prepare,
  prepareWrite,
  qb,
  query,
  readerOf,
  write,
  type Database,
  type Queryable,
} from '../sql';
import { jobColumns, toJob } from './job-columns';

/** One job by id (its 16 bytes are compared), as its reader may see it: drafts only by the consumer that created them. */
const jobById = (byCreator: boolean) =>
  prepare(jobColumns, (select) =>
    select
      .from(jobs)
      .where(
        and(
          eq(jobs.id, bound('id', jobs.id)),
          isNull(jobs.deletedAt),
          byCreator
            ? or(ne(jobs.status, 'draft'), eq(jobs.createdByConsumer, bound('consumerId', jobs.createdByConsumer)))
            : ne(jobs.status, 'draft'),
        ),
      )
      .limit(1),
  );
const JOB_BY_ID = { anyone: jobById(false), creator: jobById(true) };

async function readJob(on: Queryable, id: string, consumerId: string | undefined): Promise<Job | undefined> {
  const statement = consumerId === undefined ? JOB_BY_ID.anyone : JOB_BY_ID.creator;
  const [row] = await query(on, statement, { id, consumerId });
  return row && toJob(row);
}

/** One job by id as `consumerId` may see it: on a replica, and on the primary when the replica has not got it yet. */
export async function findJob(db: Database, id: string, consumerId: string | undefined): Promise<Job | undefined> {
  const reader = readerOf(db);
  const job = await readJob(reader, id, consumerId);
  return job ?? (reader === db ? undefined : readJob(db, id, consumerId));
}

/** A create's fields as the contract has them: the row's own columns, with the salary as one object. */
export type NewJob = Omit<
  NewJobRow,
  'id' | 'createdAt' | 'createdByConsumer' | Extract<keyof NewJobRow, `salary${string}`>
> & {
  salary?: Salary | null;
};

/** The insert of a job row with these columns given (the others take their defaults). */
const insertJob = perShape((columns: string[]) =>
  prepareWrite(
    qb
      .insert(jobs)
      .values(
        Object.fromEntries(columns.map((column) => [column, sql.placeholder(column)])) as MySqlInsertValue<typeof jobs>,
      ),
  ),
);

/** Creates a job on `on` (the primary, or the transaction of a keyed create) and reads it back there. */
export async function storeJob(on: Queryable, { salary = null, ...fields }: NewJob, consumerId: string): Promise<Job> {
  const now = new Date();
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
  const given = Object.entries(row)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  await write(on, insertJob(given.map(([column]) => column)), Object.fromEntries(given));
  return (await readJob(on, id, consumerId))!;
}

import { and, eq, isNull, ne, or } from 'drizzle-orm';
import type { Job, Salary } from '../../domain/job';
import { uuidv7 } from '../../domain/uuid';
import { jobs, type NewJobRow } from '../schema';
import { execute, qb, readerOf, select, type Database, type Queryable } from '../sql';
import { jobColumns, toJob } from './job-columns';

/** One job by id (its 16 bytes are compared), as its reader may see it: drafts only by the consumer that created them. */
async function readJob(on: Queryable, id: string, consumerId: string | undefined): Promise<Job | undefined> {
  const [row] = await select(on, jobColumns, (query) =>
    query
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
      .limit(1),
  );
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
  await execute(on, qb.insert(jobs).values(row));
  return (await readJob(on, id, consumerId))!;
}

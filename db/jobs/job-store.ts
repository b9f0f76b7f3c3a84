import { and, eq, isNull, ne, or, sql } from 'drizzle-orm';
import type { MySqlInsertValue } from 'drizzle-orm/mysql-core';
import type { Job, Salary } from '../../domain/job';
import { jobs, type NewJobRow } from '../schema';
import { preparedByShape, preparedOn, primaryOf, readerOf, type Queryable } from '../sql';
import { uuidv7 } from '../../domain/uuid';
import { publicColumns, toJob } from './job-columns';

/** One job as its reader may see it: prepared once per database, the id as the column stores it. */
const byId = preparedOn((db: Queryable) =>
  db
    .select(publicColumns)
    .from(jobs)
    .where(
      and(
        eq(jobs.id, sql.placeholder('id')),
        isNull(jobs.deletedAt),
        or(ne(jobs.status, 'draft'), eq(jobs.createdByConsumer, sql.placeholder('consumer'))),
      ),
    )
    .limit(1)
    .prepare(),
);

async function readJob(db: Queryable, id: string, consumerId: string | undefined): Promise<Job | undefined> {
  // A placeholder compared with a column is not encoded by drizzle: the id goes as the column's driver value.
  const [row] = await byId(db).execute({ id: jobs.id.mapToDriverValue(id), consumer: consumerId ?? null });
  return row && toJob(row);
}

/** One job by id, in any case (its 16 bytes are compared), as `consumerId` may see it. */
export function findJob(db: Queryable, id: string, consumerId: string | undefined): Promise<Job | undefined> {
  const primary = primaryOf(db);
  // Without replicas the one read is the answer: no second frame to wait in.
  if (primary === db) return readJob(db, id, consumerId);
  return readJob(readerOf(db), id, consumerId).then((job) => job ?? readJob(primary, id, consumerId));
}

/** A create's fields as the contract has them: the row's own columns, with the salary as one object. */
export type NewJob = Omit<NewJobRow, 'id' | 'createdAt' | 'createdByConsumer' | Extract<keyof NewJobRow, `salary${string}`>> & {
  salary?: Salary | null;
};

type Row = Record<string, unknown>;

/** A job's insert per shape (which fields a body sends, which of them null), prepared once per database; null stays SQL's null, not a placeholder the column would encode. */
const inserts = preparedByShape<Queryable, { execute(values: Row): Promise<unknown> }>();
function insertOf(db: Queryable, row: Row) {
  const keys = Object.keys(row).filter((key) => row[key] !== undefined);
  return inserts(db, keys.map((key) => (row[key] === null ? `${key}=null` : key)).join(), () => {
    const values = Object.fromEntries(keys.map((key) => [key, row[key] === null ? null : sql.placeholder(key)]));
    return db.insert(jobs).values(values as MySqlInsertValue<typeof jobs>).prepare();
  });
}

/** Creates a job on the primary (or in the transaction `db` is) and reads it back there through the one projection. */
export async function storeJob(db: Queryable, { salary = null, ...fields }: NewJob, consumerId: string): Promise<Job> {
  const primary = primaryOf(db);
  const now = new Date();
  const id = uuidv7(now);
  // Added to the rest object: spreading it into a new literal cost measurably more a create.
  const row: NewJobRow = Object.assign(fields, {
    id,
    salaryDisclosed: salary !== null,
    salaryMin: salary?.min ?? null,
    salaryMax: salary?.max ?? null,
    salaryCurrency: salary?.currency ?? null,
    createdAt: now,
    createdByConsumer: consumerId,
  });
  await insertOf(primary, row).execute(row);
  return (await readJob(primary, id, consumerId))!;
}

import { and, eq, isNull, ne, or, sql } from 'drizzle-orm';
import type { MySqlInsertValue } from 'drizzle-orm/mysql-core';
import type { Job, Salary } from '../../domain/job';
import { jobs, type NewJobRow } from '../schema';
import {
  driverOf,
  driverRows,
  preparedByShape,
  preparedOn,
  primaryOf,
  readerOf,
  statementText,
  textOnly,
  type Queryable,
} from '../sql';
import { uuidv7 } from '../../domain/uuid';
import { publicColumns, rowToJob, toJob } from './job-columns';

/** One job as its reader may see it, the id as the column stores it. */
const byIdQuery = (db: Queryable) =>
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
    .limit(1);
const byId = preparedOn((db: Queryable) => byIdQuery(db).prepare());

async function readJob(db: Queryable, id: string, consumerId: string | undefined): Promise<Job | undefined> {
  // A placeholder compared with a column is not encoded by drizzle: the id goes as the column's driver value.
  const values = { id: jobs.id.mapToDriverValue(id), consumer: consumerId ?? null };
  const driver = driverOf(db);
  if (driver) {
    const [row] = await driverRows(
      driver,
      statementText('job by id', () => byIdQuery(textOnly), values),
    );
    return row && rowToJob(row);
  }
  const [row] = await byId(db).execute(values);
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
export type NewJob = Omit<
  NewJobRow,
  'id' | 'createdAt' | 'createdByConsumer' | Extract<keyof NewJobRow, `salary${string}`>
> & {
  salary?: Salary | null;
};

type Row = Record<string, unknown>;

/** A job's insert with these fields sent; null stays SQL's null, not a placeholder the column would encode. */
const insertQuery = (db: Queryable, keys: string[], row: Row) =>
  db
    .insert(jobs)
    .values(
      Object.fromEntries(keys.map((key) => [key, row[key] === null ? null : sql.placeholder(key)])) as MySqlInsertValue<
        typeof jobs
      >,
    );

/** Prepared once per database and shape, for a transaction. */
const inserts = preparedByShape<Queryable, { execute(values: Row): Promise<unknown> }>();

async function insertJob(db: Queryable, row: Row): Promise<void> {
  // One statement per shape: which fields a body sends, and which of them are null.
  const keys = Object.keys(row).filter((key) => row[key] !== undefined);
  const shape = `insert|${keys.map((key) => (row[key] === null ? `${key}=null` : key)).join()}`;
  const driver = driverOf(db);
  if (driver)
    await driverRows(
      driver,
      statementText(shape, () => insertQuery(textOnly, keys, row), row),
    );
  else await inserts(db, shape, () => insertQuery(db, keys, row).prepare()).execute(row);
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
  await insertJob(primary, row);
  return (await readJob(primary, id, consumerId))!;
}

import { and, Column, eq, getTableColumns, getTableName, isNull, ne, or, sql } from 'drizzle-orm';
import type { Job, Salary } from '../../domain/job';
import type { Database } from '../client';
import { jobs, type NewJobRow } from '../schema';
import { compile, primaryOf, queryBuilder, quote, readRows, runStatement, type Statement } from '../sql';
import { uuidv7 } from '../../domain/uuid';
import { publicColumns, rowToJob } from './job-columns';

/** One job as its reader may see it. */
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

function readJob(db: Database, id: string, consumerId: string | undefined): Promise<Job | undefined> {
  return readRows(db, byId({ id: jobs.id.mapToDriverValue(id), consumer: consumerId ?? null })).then(([row]) => row && rowToJob(row));
}

/** One job by id, in any case (its 16 bytes are compared), as `consumerId` may see it. */
export function findJob(db: Database, id: string, consumerId: string | undefined): Promise<Job | undefined> {
  const primary = primaryOf(db);
  // Without replicas the one read is the answer: no second frame to wait in.
  if (primary === db) return readJob(db, id, consumerId);
  return readJob(db, id, consumerId).then((job) => job ?? readJob(primary, id, consumerId));
}

/** A create's fields as the contract has them: the row's own columns, with the salary as one object. */
export type NewJob = Omit<NewJobRow, 'id' | 'createdAt' | 'createdByConsumer' | Extract<keyof NewJobRow, `salary${string}`>> & {
  salary?: Salary | null;
};

type NewRow = Record<string, unknown>;
type Encode = (value: unknown) => unknown;

const COLUMNS: Record<string, Column> = getTableColumns(jobs);

/** The insert of a row with these columns, built once per shape (the optional fields a body sends vary). */
const inserts = new Map<string, { sql: string; encoders: (Encode | undefined)[] }>();
function insertOf(row: NewRow): Statement {
  const keys = Object.keys(row).filter((key) => row[key] !== undefined);
  const shape = keys.join();
  let insert = inserts.get(shape);
  if (!insert) {
    const columns = keys.map((key) => {
      const column = COLUMNS[key];
      if (!column) throw new Error(`jobs has no column for ${key}`);
      return column;
    });
    insert = {
      sql: `insert into ${quote(getTableName(jobs))} (${columns.map((column) => quote(column.name)).join(', ')}) values (${columns.map(() => '?').join(', ')})`,
      // Stryker disable next-line ConditionalExpression: equivalent, the base encoder hands the value back as it is
      encoders: columns.map((column) => (column.mapToDriverValue === Column.prototype.mapToDriverValue ? undefined : (value) => column.mapToDriverValue(value))),
    };
    inserts.set(shape, insert);
  }
  const { encoders } = insert;
  return {
    sql: insert.sql,
    params: keys.map((key, i) => {
      const value = row[key];
      const encode = encoders[i];
      return value === null || encode === undefined ? value : encode(value);
    }),
  };
}

/** Stores a new job and returns its id. */
async function insertJob(db: Database, { salary = null, ...fields }: NewJob, consumerId: string, now = new Date()): Promise<string> {
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
  await runStatement(db, insertOf(row));
  return id;
}

/** Creates a job on the primary (or in the transaction `db` is) and reads it back there through the one projection. */
export async function storeJob(db: Database, fields: NewJob, consumerId: string): Promise<Job> {
  const primary = primaryOf(db);
  const id = await insertJob(primary, fields, consumerId);
  return (await readJob(primary, id, consumerId))!;
}

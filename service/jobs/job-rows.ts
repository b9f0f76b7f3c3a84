import { Column, is, type DriverValueDecoder } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/mysql-core';
import type { Database } from '../../db/client';
import { jobs } from '../../db/schema';
import { publicColumns, type PublicJobRow } from './columns';

/**
 * publicColumns (the one Job definition's columns) compiled once, for the hot reads (a job by id,
 * listing pages): the select list as SQL text and a row mapper that only runs each field's own
 * decoder. drizzle would otherwise rebuild the statement on every request and map each row
 * through its generic mapper (issue 10 measured both at about a third of a get by id's CPU).
 */

/** Builds statements without a connection: used once per statement shape, at load. */
export const queryBuilder = new QueryBuilder();

const FROM_JOBS = ' from `jobs`';
const selectAll = queryBuilder.select(publicColumns).from(jobs).toSQL().sql;

/**
 * The select list of publicColumns, columns unqualified: valid in any statement where `jobs` is
 * the only table holding these names (undisclosed fields are nulled inside it, as everywhere).
 */
export const PUBLIC_SELECT_LIST = selectAll.slice('select '.length, selectAll.length - FROM_JOBS.length);
// Stryker disable next-line StringLiteral: fires only if a drizzle upgrade changes its select text
if (`select ${PUBLIC_SELECT_LIST}${FROM_JOBS}` !== selectAll) throw new Error('unexpected select text from drizzle');

type Decode = (value: unknown) => unknown;

/** The field's decoder, or undefined when it hands the driver's value over as it is. */
function decoderOf(field: (typeof publicColumns)[keyof typeof publicColumns]): Decode | undefined {
  if (is(field, Column)) {
    return field.mapFromDriverValue === Column.prototype.mapFromDriverValue ? undefined : (value) => field.mapFromDriverValue(value);
  }
  // `.mapWith()` sets it; drizzle's own row mapper reads the same property.
  const { decoder } = field as unknown as { decoder: DriverValueDecoder<unknown, unknown> };
  return (value) => decoder.mapFromDriverValue(value);
}

const FIELDS = Object.keys(publicColumns);
const DECODERS = Object.values(publicColumns).map(decoderOf);

/** One row of PUBLIC_SELECT_LIST (an array, in its order) as the Job's row shape. */
export function toPublicRow(values: unknown[]): PublicJobRow {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < FIELDS.length; i++) {
    const value = values[i];
    const decode = DECODERS[i];
    // As drizzle: NULL stays null without asking the decoder.
    // Stryker disable next-line ConditionalExpression: every decoder publicColumns has today maps NULL to null itself
    row[FIELDS[i]!] = value === null || decode === undefined ? value : decode(value);
  }
  return row as PublicJobRow;
}

export interface Statement {
  sql: string;
  params: unknown[];
}

/** drizzle's mysql2 session as used here: text SQL, rows as arrays, DATETIMEs as strings, logged. */
interface DriverSession {
  query(sql: string, params: unknown[]): Promise<[unknown[][], unknown]>;
}

/**
 * Where drizzle would run a select on `db`: a replica picked at random when the database has
 * replicas (db/replicas.ts), else the database or transaction itself.
 */
export function readerOf(db: Database): Database {
  const replicas = (db as { $replicas?: Database[] }).$replicas;
  return replicas?.length ? replicas[Math.floor(Math.random() * replicas.length)]! : db;
}

/**
 * The reader's session. Its query() is the one drizzle's prepared statements use (same driver
 * options, same logger, so the benchmark still sees every statement); it is not part of
 * drizzle's typed surface, hence the check.
 */
function readerSession(db: Database): DriverSession {
  const session = (readerOf(db) as unknown as { session?: Partial<DriverSession> }).session;
  if (typeof session?.query !== 'function') throw new Error('drizzle session without query(): see service/jobs/job-rows.ts');
  return session as DriverSession;
}

/** Runs a statement where drizzle would run a select; rows as arrays in select-list order. */
export async function readRows(db: Database, statement: Statement): Promise<unknown[][]> {
  const [rows] = await readerSession(db).query(statement.sql, statement.params);
  return rows;
}

/**
 * A statement that is read (awaited) like a drizzle query and shows its SQL like one, so the
 * EXPLAIN tests and the benchmark read the plan of exactly what runs.
 */
export class ReadQuery<T> implements PromiseLike<T> {
  constructor(
    private readonly db: Database,
    private readonly statement: Statement,
    private readonly map: (rows: unknown[][]) => T,
  ) {}

  toSQL(): Statement {
    return this.statement;
  }

  then<A = T, B = never>(resolve?: ((value: T) => A | PromiseLike<A>) | null, reject?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return readRows(this.db, this.statement).then(this.map).then(resolve, reject);
  }
}

import { fillPlaceholders } from 'drizzle-orm';
import type { MySQLWithReplicas } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import type { Pool } from 'mysql2/promise';
import type { Database } from './client';
import * as schema from './schema';

/** A statement as the driver takes it: SQL text with `?` placeholders, and their values (what drizzle's `toSQL()` gives). */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** A transaction of `db.transaction()`: statements written for a Database run in it unchanged. */
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

/** Where statements run: the database (with its replicas, if any) or a transaction on it. */
export type Queryable = Database | Transaction;

/** A database with no connection (drizzle.mock()): statements built on it are only turned into text, for EXPLAIN and the raw baseline. */
export const textOnly: Database = drizzle.mock({ schema, mode: 'default' });

const withReplicas = (db: Queryable): db is MySQLWithReplicas<Database> => '$primary' in db;

/** Where reads that must see the latest committed writes go: withReplicas' `$primary` (drizzle's read-replica docs), else `db` itself. */
export function primaryOf<D extends Queryable>(db: D): D {
  return withReplicas(db) ? (db.$primary as D) : db;
}

/** Where a read that may lag goes: one of withReplicas' `$replicas` (typed by MySQLWithReplicas) at random, as drizzle's own select picks, else `db` itself. */
export function readerOf<D extends Queryable>(db: D): D {
  if (!withReplicas(db)) return db;
  const replicas = db.$replicas;
  return replicas[Math.floor(Math.random() * replicas.length)] as D;
}

/**
 * A statement prepared by drizzle (`.prepare()`, with `sql.placeholder`s) once per database it
 * runs on: a primary, each replica and the text-only database each get their own, on first use.
 */
export function preparedOn<D extends object, P>(build: (db: D) => P): (db: D) => P {
  const prepared = new WeakMap<D, P>();
  return (db) => {
    let statement = prepared.get(db);
    if (statement === undefined) {
      statement = build(db);
      prepared.set(db, statement);
    }
    return statement;
  };
}

/** Shapes kept per database before the oldest are dropped: a bound on what odd queries can make it hold. */
const SHAPES_KEPT = 1000;

/**
 * Statements whose text varies with a shape (which filters, how many values, which fields are
 * null): each is built and prepared by `prepare` once per database and shape, values as `sql.placeholder`s.
 */
export function preparedByShape<D extends object, P>(): (db: D, shape: string, prepare: () => P) => P {
  const byDatabase = new WeakMap<D, Map<string, P>>();
  return (db, shape, prepare) => {
    let shapes = byDatabase.get(db);
    if (!shapes) byDatabase.set(db, (shapes = new Map()));
    let statement = shapes.get(shape);
    if (statement === undefined) {
      if (shapes.size >= SHAPES_KEPT) shapes.delete(shapes.keys().next().value!);
      statement = prepare();
      shapes.set(shape, statement);
    }
    return statement;
  };
}

/** A statement built with placeholders, as the driver takes it with these values: for EXPLAIN and the raw baseline. */
export function statementOf(query: { toSQL(): Statement }, values: Record<string, unknown>): Statement {
  const { sql, params } = query.toSQL();
  return { sql, params: fillPlaceholders(params, values) };
}

const texts = preparedByShape<Database, Statement>();

/** A statement's text built once per shape (on textOnly), with this call's values: what the raw baseline runs per request. */
export function statementText(
  shape: string,
  build: () => { toSQL(): Statement },
  values: Record<string, unknown>,
): Statement {
  const { sql, params } = texts(textOnly, shape, () => build().toSQL());
  return { sql, params: fillPlaceholders(params, values) };
}

/** The driver drizzle runs `db` on (its documented `$client`): a database has one, a transaction none. */
export const driverOf = (db: Queryable): Pool | undefined =>
  '$client' in db ? (db as { $client: Pool }).$client : undefined;

/**
 * A statement's text run on the driver itself, rows as arrays with dates as text: the request
 * path's reads and create, outside transactions. drizzle's per-field typeCast and row mapping cost
 * about a fifth of such a request (docs/decisions.md).
 */
export async function driverRows(driver: Pool, { sql, params }: Statement): Promise<unknown[][]> {
  const [rows] = await driver.query<never>({ sql, rowsAsArray: true, dateStrings: true }, params);
  return rows;
}

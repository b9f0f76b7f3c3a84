import { fillPlaceholders } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/mysql-core';
import type { Database } from './client';
import { readerOf } from './replicas';

/** A statement as the driver takes it: SQL text with `?` placeholders, and their values. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** A MySQL identifier, quoted: the one place hand-written SQL spells a table or column name. */
export const quote = (name: string): string => `\`${name.replace(/`/g, '``')}\``;

/** Builds statements without a connection: used once per statement shape, at load. */
export const queryBuilder = new QueryBuilder();

/**
 * A statement built once by drizzle, with the values of its named placeholders filled in per call
 * (a placeholder bound to a column is encoded by that column, as drizzle's own execute does).
 */
export function compile(builder: { toSQL(): Statement }): (values: Record<string, unknown>) => Statement {
  const { sql: text, params } = builder.toSQL();
  return (values) => ({ sql: text, params: fillPlaceholders(params, values) });
}

/** drizzle's mysql2 session as used here: text SQL, rows as arrays, DATETIMEs as strings, logged. */
interface DriverSession {
  query(sql: string, params: unknown[]): Promise<[unknown[][], unknown]>;
}

/**
 * The session of `db`. Its query() is the one drizzle's prepared statements use (same driver
 * options, same logger, so the benchmark and the EXPLAIN tests see every statement); it is not
 * part of drizzle's typed surface, hence the check.
 */
function sessionOf(db: Database): DriverSession {
  const session = (db as unknown as { session?: Partial<DriverSession> }).session;
  if (typeof session?.query !== 'function') throw new Error('drizzle session without query(): see db/sql.ts');
  return session as DriverSession;
}

/** Runs a statement on `db` itself (the primary or a transaction): for writes. */
export async function runStatement(db: Database, statement: Statement): Promise<void> {
  await sessionOf(db).query(statement.sql, statement.params);
}

/** Runs a hand-written read where drizzle would run a select (a replica, if any); rows as arrays. */
export async function readRows(db: Database, statement: Statement): Promise<unknown[][]> {
  const [rows] = await sessionOf(readerOf(db)).query(statement.sql, statement.params);
  return rows;
}

import { fillPlaceholders } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/mysql-core';
import type { Database } from './client';

/** A statement as the driver takes it: SQL text with `?` placeholders, and their values. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** A MySQL identifier, quoted: the one place hand-written SQL spells a table or column name. */
export const quote = (name: string): string => `\`${name.replace(/`/g, '``')}\``;

/** Builds statements without a connection: used once per statement shape, at load. */
export const queryBuilder = new QueryBuilder();

/** A statement built once by drizzle, with the values of its named placeholders filled in per call. */
export function compile(builder: { toSQL(): Statement }): (values: Record<string, unknown>) => Statement {
  const { sql: text, params } = builder.toSQL();
  return (values) => ({ sql: text, params: fillPlaceholders(params, values) });
}

/** drizzle's mysql2 session, as used here: its query() (text SQL, logged), its pool or connection, its logger. */
interface DriverSession {
  query(sql: string, params: unknown[]): Promise<[unknown[][], unknown]>;
  client: { query(options: { sql: string; rowsAsArray: true; dateStrings: true }, params: unknown[]): Promise<[unknown[][], unknown]> };
  logger: { logQuery(sql: string, params: unknown[]): void };
}

/** The session of `db`: not part of drizzle's typed surface, hence the check. */
function sessionOf(db: Database): DriverSession {
  const session = (db as unknown as { session?: Partial<DriverSession> }).session;
  if (typeof session?.query !== 'function' || typeof session.client?.query !== 'function' || typeof session.logger?.logQuery !== 'function') {
    throw new Error('drizzle session without query(): see db/sql.ts');
  }
  return session as DriverSession;
}

/** Where reads that must see the latest committed writes go. */
export function primaryOf(db: Database): Database {
  return (db as Database & { $primary?: Database }).$primary ?? db;
}

/** Where a read that may lag goes: a replica picked at random, as drizzle's select would, else `db` itself. */
export function readerOf(db: Database): Database {
  const replicas = (db as { $replicas?: Database[] }).$replicas;
  return replicas?.length ? replicas[Math.floor(Math.random() * replicas.length)]! : db;
}

/** Runs a statement on `db` itself (the primary or a transaction): for writes; the rows it matched. */
export async function runStatement(db: Database, statement: Statement): Promise<number> {
  const [result] = await sessionOf(db).query(statement.sql, statement.params);
  return (result as unknown as { affectedRows?: number }).affectedRows ?? 0;
}

/** Runs a hand-written read where drizzle would run a select (a replica, if any); rows as arrays. */
export async function readRows(db: Database, statement: Statement): Promise<unknown[][]> {
  const session = sessionOf(readerOf(db));
  session.logger.logQuery(statement.sql, statement.params);
  const [rows] = await session.client.query({ sql: statement.sql, rowsAsArray: true, dateStrings: true }, statement.params);
  return rows;
}

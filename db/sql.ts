import { Column, is, Param, Placeholder, sql as drizzleSql, SQL, type GetColumnData } from 'drizzle-orm';
import type { MySqlColumn } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import type { Pool, PoolConnection, ResultSetHeader } from 'mysql2';
import { errorCode } from './errors';
import * as schema from './schema';

/**
 * db/'s one executor (the Kysely model): drizzle builds every statement on `qb`, which has no
 * connection, `prepare` compiles it once (`toSQL()`, its values as `sql.placeholder`s), and `run`
 * sends it on mysql2 with the values filled in, on the pool or on a transaction's connection alike,
 * each statement with mysql2's per-query `timeout` as the client's deadline.
 */

/** A statement as the driver takes it: SQL text with `?` placeholders, and their values (drizzle's `toSQL()`). */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** Anything drizzle builds: a select, insert, update or delete of its query builder. */
export interface Query {
  toSQL(): Statement;
}

/** The query builder every statement is written with (drizzle.mock(): it never runs one itself). */
export const qb = drizzle.mock({ schema, mode: 'default' });

/** Where statements run: the connection each one is sent on, and what becomes of it after. */
export interface Queryable {
  /** The client's deadline of every statement (mysql2's per-query `timeout`), in ms; none when undefined. */
  readonly deadlineMs: number | undefined;
  /** Whether each statement commits on its own (autocommit): then one InnoDB chose as a deadlock's victim is sent again. */
  readonly autocommit: boolean;
  /** The connection the next statement is sent on: one of the pool's, or the transaction's. */
  take(): Promise<PoolConnection>;
  /** After a statement that answered: back to the pool, or kept by the transaction for its next one. */
  giveBack(connection: PoolConnection): void;
  /** After a statement nothing answered in time: the connection's state is unknown, so it is destroyed. */
  drop(connection: PoolConnection): void;
}

/** The primary (statements run on it) and its read replicas, if any: the service's one handle on the data. */
export interface Database extends Queryable {
  readonly replicas: readonly Queryable[];
  /** Told when the change feed's numbering starts a new history: the database was restored (or recreated) under it. */
  readonly onNewHistory?: (history: { history: string; firstSeq: number }) => void;
}

/** Where a read that may lag goes: one of the replicas at random, else the primary. */
export function readerOf(db: Database): Queryable {
  const { replicas } = db;
  return replicas.length === 0 ? db : replicas[Math.floor(Math.random() * replicas.length)]!;
}

/** A pool's statements: each takes a connection of `pool` and gives it back after, or destroys it past the deadline. */
export function pooled(
  pool: Pool,
  deadlineMs: number | undefined,
  watch: { waiting: number; dropped(connection: PoolConnection): void },
): Queryable {
  return {
    deadlineMs,
    autocommit: true,
    take: () =>
      new Promise((resolve, reject) => {
        watch.waiting++;
        pool.getConnection((error, connection) => {
          watch.waiting--;
          if (error) reject(error);
          else resolve(connection);
        });
      }),
    giveBack: (connection) => connection.release(),
    drop: (connection) => {
      connection.destroy();
      watch.dropped(connection);
    },
  };
}

type Result = unknown[][] | ResultSetHeader;

/** Sends one statement on a connection of `on`: rows as arrays (dates as the driver's text, as drizzle's columns decode them), or a write's header. */
function send(on: Queryable, { sql, params }: Statement): Promise<Result> {
  return on.take().then(
    (connection) =>
      new Promise<Result>((resolve, reject) => {
        const options = { sql, values: params, rowsAsArray: true, dateStrings: true, timeout: on.deadlineMs };
        try {
          connection.query<never>(options, (error, result) => {
            if (error && errorCode(error) === 'PROTOCOL_SEQUENCE_TIMEOUT') on.drop(connection);
            else on.giveBack(connection);
            if (error) reject(error);
            else resolve(result);
          });
        } catch (thrown) {
          // A statement refused before it is sent (an undefined bind value): the connection is as it was.
          on.giveBack(connection);
          reject(thrown instanceof Error ? thrown : new Error(String(thrown)));
        }
      }),
  );
}

/** Tries of a statement, or of a transaction's work, that InnoDB rolls back as a deadlock's victim. */
const DEADLOCK_TRIES = 3;
const lostDeadlock = (error: unknown, attempt: number) =>
  errorCode(error) === 'ER_LOCK_DEADLOCK' && attempt < DEADLOCK_TRIES;

/** Sends one statement, again when it alone lost a deadlock (InnoDB rolled it back whole): the manual's advice. */
async function run(on: Queryable, statement: Statement): Promise<Result> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send(on, statement);
    } catch (error) {
      if (!on.autocommit || !lostDeadlock(error, attempt)) throw error;
    }
  }
}

/** What a select may name: a column (decoded by its own mapFromDriverValue) or an expression (the driver's value, typed by `sql<T>`). */
type Field = MySqlColumn | SQL | SQL.Aliased;
export type Selection = Record<string, Field>;

type ValueOf<F> = F extends Column ? GetColumnData<F> : F extends SQL<infer T> | SQL.Aliased<infer T> ? T : never;
/** A row of `S` as `select` returns it. */
export type RowOf<S extends Selection> = { [K in keyof S]: ValueOf<S[K]> };

const asIs = (value: unknown) => value;
const decoderOf = (field: Field) => (is(field, Column) ? (value: unknown) => field.mapFromDriverValue(value) : asIs);

/** A statement written on drizzle's select of `S` (`qb.select(selection)`): what `select` runs. */
export type Build<S extends Selection> = (select: ReturnType<typeof qb.select<S>>) => Query;

/** The values of a compiled statement's placeholders, by name. */
export type Values = Record<string, unknown>;

/** A statement compiled once: its text, how each param is had from a run's values, and how its rows are read. */
export interface Compiled<Row> {
  readonly sql: string;
  readonly params: ReadonlyArray<(values: Values) => unknown>;
  /** A select's field names and decoders, in its select list's order; none for a write. */
  readonly keys: readonly string[];
  readonly decoders: ReadonlyArray<(value: unknown) => unknown>;
  /** Only for the type: the row this statement reads. */
  readonly row?: Row;
}

/** A value given when the statement runs: `eq(column, bound('name', column))` is encoded as the column declares. */
export const bound = (name: string, column: MySqlColumn) => drizzleSql.param(drizzleSql.placeholder(name), column);

/**
 * Compiles `build(qb.select(selection))` once. The select list is the selection's, in its order:
 * decoders and values line up by construction. Values come from `bound` placeholders at each run.
 */
export function prepare<S extends Selection>(selection: S, build: Build<S>): Compiled<RowOf<S>> {
  return {
    ...compile(build(qb.select(selection))),
    keys: Object.keys(selection),
    decoders: Object.values(selection).map(decoderOf),
  };
}

/** Compiles an insert, update or delete (or any statement whose rows are not read) once. */
export const prepareWrite = (query: Query): Compiled<never> => ({ ...compile(query), keys: [], decoders: [] });

/** The value of a run's placeholder, encoded as its column declares (null as is, as drizzle binds it inline). */
function valueOf(param: unknown): (values: Values) => unknown {
  const placeholder = is(param, Placeholder)
    ? param
    : is(param, Param) && is(param.value, Placeholder)
      ? param.value
      : undefined;
  if (placeholder === undefined) return () => param;
  const encode = is(param, Param)
    ? (given: unknown) => param.encoder.mapToDriverValue(given)
    : (given: unknown) => given;
  const { name } = placeholder;
  return (values) => {
    const given = values[name];
    if (given === undefined) throw new Error(`No value for the placeholder ${name}`);
    return given === null ? null : encode(given);
  };
}

const compile = (query: Query) => {
  const { sql, params } = query.toSQL();
  return { sql, params: params.map(valueOf) };
};

/**
 * Compiles once per shape: the cache key is the shape `compile` is given (as JSON), and `compile`
 * reads nothing else (its values are placeholders), so two statements that differ in text never share
 * an entry. A shape is a small finite thing (flags, a list's length), never a value.
 */
export function perShape<Shape, C>(build: (shape: Shape) => C): (shape: Shape) => C {
  const compiled = new Map<string, C>();
  return (shape) => {
    const key = JSON.stringify(shape);
    let statement = compiled.get(key);
    if (statement === undefined) compiled.set(key, (statement = build(shape)));
    return statement;
  };
}

/** A compiled statement with a run's values: the text and params the driver takes (for EXPLAIN too). */
export const bind = ({ sql, params }: Compiled<unknown>, values: Values): Statement => ({
  sql,
  params: params.map((param) => param(values)),
});

/** The rows of a compiled select, its placeholders filled from `values`, each field decoded as the schema declares it. */
export async function query<Row>(on: Queryable, compiled: Compiled<Row>, values: Values = {}): Promise<Row[]> {
  const { keys, decoders } = compiled;
  const rows = (await run(on, bind(compiled, values))) as unknown[][];
  return rows.map((fields) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const value = fields[i];
      row[keys[i]!] = value === null ? null : decoders[i]!(value);
    }
    return row as Row;
  });
}

/** Runs a compiled write with its placeholders filled from `values`: the server's header (affectedRows). */
export async function write(on: Queryable, compiled: Compiled<never>, values: Values = {}): Promise<ResultSetHeader> {
  return (await run(on, bind(compiled, values))) as ResultSetHeader;
}

/** A select built for this call (its values inline): compiled and run as any other. */
export const select = <S extends Selection>(on: Queryable, selection: S, build: Build<S>): Promise<Array<RowOf<S>>> =>
  query(on, prepare(selection, build));

/** A write built for this call (its values inline): compiled and run as any other. */
export const execute = (on: Queryable, statement: Query): Promise<ResultSetHeader> =>
  write(on, prepareWrite(statement));

/** A statement written as text, for what drizzle's builder does not write (transaction control, `select 1`). */
export const text = (sql: string): Query => ({ toSQL: () => ({ sql, params: [] }) });

export type Isolation = 'read committed' | 'repeatable read';

/**
 * `work` in one transaction on one connection of `db`'s primary, its statements sent by `run` as
 * any other (with the deadline). A statement that passed the deadline destroyed the connection;
 * otherwise a failure rolls back and a rollback that fails destroys it: never a connection in an
 * unknown state back in the pool. A deadlock's victim runs `work` again from the start.
 */
export async function transaction<T>(
  db: Database,
  work: (tx: Queryable) => Promise<T>,
  isolation?: Isolation,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(db, work, isolation);
    } catch (error) {
      // InnoDB rolled the deadlock's victim back whole: its work is run again from the start.
      if (!lostDeadlock(error, attempt)) throw error;
    }
  }
}

async function once<T>(db: Database, work: (tx: Queryable) => Promise<T>, isolation?: Isolation): Promise<T> {
  const connection = await db.take();
  let lost = false;
  const tx: Queryable = {
    deadlineMs: db.deadlineMs,
    autocommit: false,
    take: () => Promise.resolve(connection),
    // The transaction keeps its connection until it ends.
    giveBack: () => undefined,
    drop: (dropped) => {
      lost = true;
      db.drop(dropped);
    },
  };
  try {
    if (isolation) await execute(tx, text(`set transaction isolation level ${isolation}`));
    await execute(tx, text('start transaction'));
    const result = await work(tx);
    await execute(tx, text('commit'));
    db.giveBack(connection);
    return result;
  } catch (error) {
    if (!lost)
      await execute(tx, text('rollback')).then(
        () => db.giveBack(connection),
        () => lost || tx.drop(connection),
      );
    throw error;
  }
}

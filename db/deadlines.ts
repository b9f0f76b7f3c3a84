import type { FieldPacket, Pool as CorePool, PoolConnection as CoreConnection, QueryError, QueryOptions } from 'mysql2';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { errorCode } from './errors';

/** How much longer than the server's own statement limit the client waits before it calls the link dead. */
export const CLIENT_MARGIN_MS = 1000;

/**
 * The statement that makes the server itself stop a statement after `ms`, one for both servers:
 * MariaDB runs `/*M!` comments and skips MySQL's `/*!50700`..`/*!99999` ones, MySQL does the opposite.
 */
export function sessionLimitsSql(ms: number): string {
  const lockSeconds = Math.max(1, Math.ceil(ms / 1000));
  return (
    `SET SESSION lock_wait_timeout = ${lockSeconds}, innodb_lock_wait_timeout = ${lockSeconds}` +
    ` /*!50708 , max_execution_time = ${ms} */ /*M!100101 , max_statement_time = ${(ms / 1000).toFixed(3)} */`
  );
}

/**
 * Sets the server's limits on every new connection of `pool` before its first statement: mysql2
 * emits 'connection' before it hands the connection over, so this statement is queued first.
 */
export function limitSessions(pool: CorePool, statementMs: number): void {
  const limits = sessionLimitsSql(statementMs);
  pool.on('connection', (connection) => {
    // A connection without its limits is not reused (the statement queued behind this one still gets its answer).
    connection.query(limits, (error) => error && connection.destroy());
  });
}

/** Counts kept by the pool's own user: callers waiting for a connection, and connections it dropped. */
export interface PoolWatch {
  waiting: number;
  dropped(connection: CoreConnection): void;
}

type Method = 'query' | 'execute';
type Sql = string | QueryOptions;
type Result = [never, FieldPacket[]];

/**
 * `pool` as mysql2's promise pool whose statements carry a client-side `timeout` of `clientMs`
 * (none when undefined): a statement nothing answered in time fails, and its connection, whose
 * state is unknown, is destroyed instead of reused. Statements go through the callback API: the
 * promise wrappers capture a stack trace per statement.
 */
export function boundedPool(pool: CorePool, clientMs: number | undefined, watch: PoolWatch): Pool {
  const bounded = (sql: Sql): Sql =>
    clientMs === undefined
      ? sql
      : typeof sql === 'string'
        ? { sql, timeout: clientMs }
        : sql.timeout === undefined
          ? { ...sql, timeout: clientMs }
          : sql;

  /** Runs one statement on `connection`, then releases it (when `release`) or drops it (when the deadline passed). */
  function send(
    connection: CoreConnection,
    method: Method,
    sql: Sql,
    values: unknown,
    release: boolean,
    resolve: (result: Result) => void,
    reject: (error: unknown) => void,
  ): void {
    const done = (error: QueryError | null, rows?: unknown, fields?: FieldPacket[]) => {
      if (error && errorCode(error) === 'PROTOCOL_SEQUENCE_TIMEOUT') {
        connection.destroy();
        watch.dropped(connection);
      } else if (release) connection.release();
      if (error) reject(error);
      else resolve([rows as never, fields!]);
    };
    const run = connection[method] as (options: Sql, ...rest: unknown[]) => unknown;
    try {
      if (values === undefined) run.call(connection, bounded(sql), done);
      else run.call(connection, bounded(sql), values, done);
    } catch (thrown) {
      // As mysql2's own pool: a statement refused before it is sent (undefined bind values) rejects.
      if (release) connection.release();
      reject(thrown);
    }
  }

  function acquire(reject: (error: unknown) => void, then: (connection: CoreConnection) => void): void {
    watch.waiting++;
    pool.getConnection((error, connection) => {
      watch.waiting--;
      if (error) reject(error);
      else then(connection);
    });
  }

  const once = (method: Method) => (sql: Sql, values?: unknown) =>
    new Promise<Result>((resolve, reject) =>
      acquire(reject, (connection) => send(connection, method, sql, values, true, resolve, reject)),
    );

  // Transactions hold one connection for several statements: each of them is bounded the same way.
  const getConnection = () =>
    new Promise<PoolConnection>((resolve, reject) =>
      acquire(reject, (connection) => {
        const on = (method: Method) => (sql: Sql, values?: unknown) =>
          new Promise<Result>((done, fail) => send(connection, method, sql, values, false, done, fail));
        resolve(Object.assign(connection.promise(), { query: on('query'), execute: on('execute') }));
      }),
    );

  return Object.assign(pool.promise(), { query: once('query'), execute: once('execute'), getConnection });
}

import type { Socket } from 'node:net';
import type { Pool, PoolConnection, QueryOptions, RowDataPacket } from 'mysql2/promise';
import { errorCode } from './errors';

/** How much longer than the server's own statement limit the client waits before it calls the link dead. */
export const CLIENT_MARGIN_MS = 1000;

/** The statement that makes the server itself stop a statement after `ms`. */
export function sessionLimitsSql(serverVersion: string, ms: number): string {
  const lockSeconds = Math.max(1, Math.ceil(ms / 1000));
  const locks = `lock_wait_timeout = ${lockSeconds}, innodb_lock_wait_timeout = ${lockSeconds}`;
  return /mariadb/i.test(serverVersion)
    ? `SET SESSION max_statement_time = ${(ms / 1000).toFixed(3)}, ${locks}`
    : `SET SESSION max_execution_time = ${ms}, ${locks}`;
}

/** A connection of mysql2's callback pool, as used here. */
interface CoreConnection {
  query(options: QueryOptions, ...rest: unknown[]): void;
  execute(options: QueryOptions, ...rest: unknown[]): void;
  release(): void;
  destroy(): void;
  stream?: Socket;
}

interface CorePool {
  getConnection(callback: (error: unknown, connection: CoreConnection) => void): void;
}

/** Closes a connection whose state is unknown (a command still unanswered) instead of reusing it. */
function discard(connection: CoreConnection): void {
  connection.destroy(); // out of the pool; mysql2 only half-closes the socket
  connection.stream?.destroy();
}

const coreOf = (connection: PoolConnection) => connection.connection as unknown as CoreConnection;

type Method = 'query' | 'execute';
type Sql = string | QueryOptions;

/** The pool with every query bounded. */
export function withDeadlines(pool: Pool, statementMs: number): Pool {
  const clientMs = statementMs + CLIENT_MARGIN_MS;
  const limited = new WeakSet<object>();

  async function run(connection: PoolConnection, method: Method, sql: Sql, values?: unknown): Promise<unknown> {
    const options = typeof sql === 'string' ? { sql } : sql;
    try {
      return await (connection[method] as (options: QueryOptions, values?: unknown) => Promise<unknown>)(
        { ...options, timeout: options.timeout ?? clientMs },
        values,
      );
    } catch (error) {
      if (errorCode(error) === 'PROTOCOL_SEQUENCE_TIMEOUT') discard(coreOf(connection));
      throw error;
    }
  }

  async function acquire(): Promise<PoolConnection> {
    const connection = await pool.getConnection();
    if (limited.has(connection.connection)) return connection;
    try {
      const [rows] = (await run(connection, 'query', 'SELECT VERSION() AS version')) as [RowDataPacket[]];
      await run(connection, 'query', sessionLimitsSql(String(rows[0]?.version ?? ''), statementMs));
    } catch (error) {
      discard(coreOf(connection));
      throw error;
    }
    limited.add(connection.connection);
    return connection;
  }

  const firstUse = (method: Method) => async (sql: Sql, values?: unknown) => {
    const connection = await acquire();
    try {
      return await run(connection, method, sql, values);
    } finally {
      connection.release(); // a no-op when run() discarded it
    }
  };

  // Through mysql2's callback pool: the promise pool's wrappers cost CPU on every statement.
  const core = (pool as unknown as { pool: CorePool }).pool;
  const once = (method: Method) => {
    const slow = firstUse(method);
    return (sql: Sql, values?: unknown) =>
      new Promise<unknown>((resolve, reject) => {
        core.getConnection((error, connection) => {
          if (error) return reject(error);
          if (!limited.has(connection)) {
            connection.release();
            return slow(sql, values).then(resolve, reject);
          }
          const done = (failure: unknown, rows?: unknown, fields?: unknown) => {
            if (failure && errorCode(failure) === 'PROTOCOL_SEQUENCE_TIMEOUT') discard(connection);
            else connection.release();
            if (failure) reject(failure);
            else resolve([rows, fields]);
          };
          const options = typeof sql === 'string' ? { sql } : sql;
          const bounded = { ...options, timeout: options.timeout ?? clientMs };
          try {
            if (values === undefined) connection[method](bounded, done);
            else connection[method](bounded, values, done);
          } catch (thrown) {
            // As the promise pool: a statement mysql2 refuses before sending (undefined bind values) rejects.
            connection.release();
            reject(thrown);
          }
        });
      });
  };

  // Transactions hold one connection for several queries: each of them is bounded the same way.
  const getConnection = async () => {
    const connection = await acquire();
    return new Proxy(connection, {
      get(target, property) {
        if (property === 'query' || property === 'execute') return (sql: Sql, values?: unknown) => run(target, property, sql, values);
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };

  const overrides: Record<string | symbol, unknown> = { query: once('query'), execute: once('execute'), getConnection };
  return new Proxy(pool, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

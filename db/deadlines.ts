import type { Pool as CorePool } from 'mysql2';

/** How much longer than the server's own statement limit the client waits before it calls the link dead. */
export const CLIENT_MARGIN_MS = 1000;

/**
 * The statement that makes the server itself stop a statement after `ms`, one for both servers:
 * MariaDB runs `/*M!` comments and skips MySQL's `/*!50700`..`/*!99999` ones, MySQL does the opposite.
 * MariaDB also ends a transaction left idle for twice the lock wait: ours send their statements back
 * to back, so an idle one belongs to a stalled process, and its locks would stop every other.
 */
export function sessionLimitsSql(ms: number): string {
  const lockSeconds = Math.max(1, Math.ceil(ms / 1000));
  return (
    `SET SESSION lock_wait_timeout = ${lockSeconds}, innodb_lock_wait_timeout = ${lockSeconds}` +
    ` /*!50708 , max_execution_time = ${ms} */ /*M!100101 , max_statement_time = ${(ms / 1000).toFixed(3)} */` +
    ` /*M!100300 , idle_transaction_timeout = ${2 * lockSeconds} */`
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

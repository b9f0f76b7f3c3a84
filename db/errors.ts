// Server errors mysql2 has no name for (it knows MySQL's list, not MariaDB's additions).
const UNNAMED_ERRNOS: Record<number, string> = {
  1969: 'ER_STATEMENT_TIMEOUT', // MariaDB: max_statement_time exceeded
};

/** The driver's error code, looking through wrappers (drizzle's query error, AggregateError). */
export function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errno = (e as { errno?: unknown }).errno;
    if (typeof errno === 'number' && UNNAMED_ERRNOS[errno]) return UNNAMED_ERRNOS[errno];
    // AggregateError (several addresses tried, all failed) keeps the codes in .errors.
    const nested = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(nested) && nested.length > 0) return errorCode(nested[0]);
  }
  return undefined;
}

// Codes that mean the link to the server failed, not a statement: no answer, or none any more.
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT', // the client's deadline on a silent link (db/deadlines.ts)
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
]);

// Codes that mean "the database is not there right now": the link's, and its time limits; retrying later can succeed.
const UNAVAILABLE = new Set([
  ...UNREACHABLE,
  // Time limits (db/deadlines.ts): the statement ran out of time, or nothing answered in time.
  'ER_STATEMENT_TIMEOUT', // MariaDB max_statement_time
  'ER_QUERY_TIMEOUT', // MySQL max_execution_time
  'ER_LOCK_WAIT_TIMEOUT', // a table or row lock held by someone else (lock_wait_timeout, innodb_lock_wait_timeout)
  'ER_QUERY_INTERRUPTED', // KILL QUERY, or a server shutting down
  'DB_DEADLINE', // a probe's own deadline (deadlineError)
]);

/** An error meaning "no answer within `ms`", which requests answer with 503 + Retry-After. */
export function deadlineError(ms: number): Error {
  return Object.assign(new Error(`The database did not answer within ${ms} ms`), { code: 'DB_DEADLINE' });
}

/**
 * Whether the connection the error came from is gone without the server having said why: mysql2
 * marks `fatal` every error after which a connection is unusable, and only the server's own
 * answers carry a `sqlState`. This names a lost link whatever the driver calls it, e.g. "Can't add
 * new command when connection is in closed state" (a pooled connection whose socket was cut
 * while it sat free), which has no code at all.
 */
function isLostLink(error: unknown): boolean {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const { fatal, sqlState } = e as { fatal?: unknown; sqlState?: unknown };
    if (fatal === true && sqlState === undefined) return true;
  }
  return false;
}

/** Whether the error says the database cannot be reached (a subset of unavailable: a statement's time limit is not). */
export function isDatabaseUnreachable(error: unknown): boolean {
  const code = errorCode(error);
  return (code !== undefined && UNREACHABLE.has(code)) || isLostLink(error);
}

export function isDatabaseUnavailable(error: unknown): boolean {
  const code = errorCode(error);
  return (
    (code !== undefined && UNAVAILABLE.has(code)) ||
    isLostLink(error) ||
    /Pool is closed/.test(String((error as Error)?.message))
  );
}

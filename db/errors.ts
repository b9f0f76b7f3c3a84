/** The driver's error code, looking through wrappers (drizzle's query error, AggregateError). */
export function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    // AggregateError (several addresses tried, all failed) keeps the codes in .errors.
    const nested = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(nested) && nested.length > 0) return errorCode(nested[0]);
  }
  return undefined;
}

// Codes that mean "the database is not there right now": retrying later can succeed.
const UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  const code = errorCode(error);
  return (code !== undefined && UNAVAILABLE.has(code)) || /Pool is closed/.test(String((error as Error)?.message));
}

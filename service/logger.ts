import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs, one line per event. Keys and gateway secrets are redacted wherever they appear
 * as fields; request lines never carry headers or bodies at all (middleware/request-outcome.ts).
 *
 * Without a destination the lines go to stdout asynchronously and in batches (pino.destination
 * with sync: false and a 4 KiB minLength): a request never waits for a write(2) of its line, and
 * under load about thirty lines leave in one write instead of one write, thread-pool hand-off and
 * callback per line. A quiet service still shows its lines within LOG_FLUSH_INTERVAL_MS, and
 * lifecycle lines (listening, stopped) are flushed at once (flushNow). pino flushes what is still
 * buffered synchronously on the process's 'exit' event, which also fires on process.exit() (our
 * SIGTERM path) and after an uncaught exception (exitOnCrash below); only SIGKILL can lose lines.
 */
export const LOG_BATCH_BYTES = 4096;
export const LOG_FLUSH_INTERVAL_MS = 1000;

export function createLogger(level: string, destination: DestinationStream = batched(1)): Logger {
  return pino(
    {
      level,
      base: { service: 'jobs-service' },
      redact: {
        paths: ['*.headers["x-api-key"]', '*.headers["x-gateway-secret"]', '*.apiKey', '*.api_key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/** Lines for `dest` (a file descriptor, 1 for stdout, or a file path), written in batches (above). */
export function batched(dest: number | string): ReturnType<typeof pino.destination> {
  // Stryker disable next-line BooleanLiteral: sync changes which thread waits for write(2), not what is written or when flushNow has it written; a speed matter (npm run bench)
  const stream = pino.destination({ dest, sync: false, minLength: LOG_BATCH_BYTES });
  // unref: the timer never keeps a stopping process alive; exit flushes the rest.
  setInterval(() => {
    try {
      stream.flush();
    } catch {
      // Ended (the process is exiting): what was buffered has been written already.
    }
  }, LOG_FLUSH_INTERVAL_MS).unref();
  return stream;
}

/** Writes what is buffered now: for lines someone waits to see (the service is listening). */
export function flushNow(logger: Logger): void {
  logger.flush();
}

/**
 * A crash becomes one `fatal` line, then exit code 1 (the buffered lines before it are flushed on
 * exit). Name, code and stack frames only: an error's message may quote SQL and bound values.
 */
export function exitOnCrash(logger: Logger): void {
  // process.exit() does not return, and a throw inside this handler ends the process (code 7).
  process.on('uncaughtException', (error: unknown) => {
    const { name, code, stack } = (error ?? {}) as { name?: string; code?: unknown; stack?: string };
    const frames = typeof stack === 'string' ? stack.split('\n').filter((line) => /^\s+at /.test(line)).join('\n') : undefined;
    logger.fatal({ err: { name, code, frames } }, 'uncaught exception: exiting');
    process.exit(1);
  });
}

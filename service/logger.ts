import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** JSON logs, one line per event. */
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

/** A crash becomes one `fatal` line, then exit code 1 (the buffered lines before it are flushed on exit). */
export function exitOnCrash(logger: Logger): void {
  // process.exit() does not return, and a throw inside this handler ends the process (code 7).
  process.on('uncaughtException', (error: unknown) => {
    const { name, code, stack } = (error ?? {}) as { name?: string; code?: unknown; stack?: string };
    const frames =
      typeof stack === 'string'
        ? stack
            .split('\n')
            .filter((line) => /^\s+at /.test(line))
            .join('\n')
        : undefined;
    logger.fatal({ err: { name, code, frames } }, 'uncaught exception: exiting');
    process.exit(1);
  });
}

import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs, one line per event. Keys and gateway secrets are redacted wherever they appear
 * as fields; request lines never carry headers or bodies at all (middleware/request-log.ts).
 *
 * Without a destination the lines go to stdout asynchronously (pino.destination with
 * sync: false): a request no longer waits for a write(2) of its log line, and lines written while
 * one write is in flight go out together. pino flushes what is still buffered synchronously on
 * the process's 'exit' event, which also fires on process.exit() (our SIGTERM path) and after an
 * uncaught exception (exitOnCrash below); only SIGKILL can lose the last lines.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'jobs-service' },
      redact: {
        paths: ['*.headers["x-api-key"]', '*.headers["x-gateway-secret"]', '*.apiKey', '*.api_key'],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * A crash becomes one `fatal` line, then exit code 1 (the buffered lines before it are flushed on
 * exit). Name, code and stack frames only: an error's message may quote SQL and bound values.
 */
export function exitOnCrash(logger: Logger): void {
  let crashed = false;
  process.on('uncaughtException', (error: unknown) => {
    if (crashed) return;
    crashed = true;
    const { name, code, stack } = (error ?? {}) as { name?: string; code?: unknown; stack?: string };
    const frames = typeof stack === 'string' ? stack.split('\n').filter((line) => /^\s+at /.test(line)).join('\n') : undefined;
    logger.fatal({ err: { name, code, frames } }, 'uncaught exception: exiting');
    process.exit(1);
  });
}

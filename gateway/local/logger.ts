import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * JSON log lines on stderr, written asynchronously in batches of 4 KiB and at least every second
 * (as the service's logger): a request never waits for a write(2) of its line, and pino flushes
 * what is still buffered on the process's 'exit' event, which main.ts reaches on SIGINT/SIGTERM.
 * Level from Kong's own setting, KONG_LOG_LEVEL (Kong's names: debug, info, notice, warn, error,
 * crit, alert, emerg; Kong's default is notice).
 */
const LEVELS: Record<string, string> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warn: 'warn',
  error: 'error',
  crit: 'fatal',
  alert: 'fatal',
  emerg: 'fatal',
};

export function createGatewayLogger(env: NodeJS.ProcessEnv): Logger {
  const level = LEVELS[(env.KONG_LOG_LEVEL ?? 'notice').toLowerCase()] ?? 'info';
  const stream = pino.destination({ dest: 2, sync: false, minLength: 4096 });
  setInterval(() => {
    try {
      stream.flush();
    } catch {
      // Ended (the process is exiting): what was buffered has been written already.
    }
  }, 1000).unref();
  return pino({ level, base: { component: 'local-gateway' } }, stream);
}

export const silentLogger: Logger = pino({ level: 'silent' });

import pino, { type Logger } from 'pino';
import { batched } from '../../service/logger';

export type { Logger };

/** Kong's log_level names (KONG_LOG_LEVEL, default notice) as pino levels. */
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

/** JSON lines on stderr through the service's batched stream (one implementation of batching). */
export function createGatewayLogger(env: NodeJS.ProcessEnv): Logger {
  const level = LEVELS[(env.KONG_LOG_LEVEL ?? 'notice').toLowerCase()] ?? 'info';
  return pino({ level, base: { component: 'local-gateway' } }, batched(2));
}

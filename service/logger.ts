import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs, one line per event. Keys and gateway secrets are redacted wherever they appear
 * as fields; request lines never carry headers or bodies at all (middleware/request-log.ts).
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
    destination,
  );
}

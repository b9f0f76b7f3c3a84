import { z } from 'zod';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A whole number in [min, max], from the environment (digits only) or from runService's overrides, with one message for every way it can be wrong. */
const whole = (min: number, max: number, message: string) =>
  z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)], { error: message })
    .pipe(z.number().int(message).min(min, message).max(max, message));
const wholeNumber = (min: number, max: number, unit: string) =>
  whole(min, max, `must be a whole number of ${unit} from ${min} to ${max}`);

/** Everything the service reads from its environment, parsed once at start-up. */
export const Config = z
  .object({
    port: whole(0, 65535, 'must be a port number (0-65535)').default(3000),
    // Loopback by default: partners reach the service only through the gateway.
    host: z.string().min(1).default('127.0.0.1'),
    databaseUrl: z
      .string()
      .default('mysql://root@127.0.0.1:3306/jobs')
      .refine((value) => /^mysql:\/\/[^/]+\/[A-Za-z0-9_]{1,64}$/.test(value), {
        message: 'must look like mysql://user:password@host:3306/database',
      }),
    // When set, only requests carrying it in X-Gateway-Secret are served (the gateway adds it).
    gatewaySecret: z.string().min(16, 'must be at least 16 characters').optional(),
    // During a rotation, the secret the gateway is being switched to: accepted as well (docs/operations.md, "Rotating the gateway secret").
    gatewaySecretNext: z.string().min(16, 'must be at least 16 characters').optional(),
    dbPoolSize: whole(1, 100, 'must be a whole number from 1 to 100').default(10),
    logLevel: z.enum(LOG_LEVELS).default('info'),
    // Demo jobs into an empty table at start-up only when asked (npm start asks); never by default.
    seedDemoData: z
      .union([z.boolean(), z.enum(['true', 'false'])], { error: 'must be true or false' })
      .default(false)
      .transform((value) => value === true || value === 'true'),
    // Bounded waits on the database (docs/decisions.md, "Timeouts, overload and shutdown").
    dbConnectTimeoutMs: wholeNumber(100, 60000, 'milliseconds').default(2000),
    // Below the gateway's 30 s read timeout, so a slow query is our 503, not the gateway's 504.
    dbQueryTimeoutMs: wholeNumber(100, 25000, 'milliseconds').default(5000),
    // Unset: waiting is bounded by its expected length (service/middleware/admission.ts); set: a fixed number of requests may wait instead.
    dbQueueLimit: wholeNumber(0, 10000, 'requests').optional(),
    readyTimeoutMs: wholeNumber(50, 10000, 'milliseconds').default(800),
    // Below Kubernetes' default 30 s terminationGracePeriodSeconds.
    shutdownGraceMs: wholeNumber(0, 300000, 'milliseconds').default(10000),
    // How long a client may take to send a request's head, then its body (a 408 after either).
    headersTimeoutMs: wholeNumber(100, 300000, 'milliseconds').default(10000),
    bodyReadTimeoutMs: wholeNumber(100, 300000, 'milliseconds').default(10000),
    // Prometheus metrics on a port of their own (service/metrics.ts), never the API's; unset: none.
    metricsPort: whole(0, 65535, 'must be a port number (0-65535)').optional(),
    // How long a connection the HTTP parser refused may go on sending after its 4xx (service/client-error.ts).
    clientErrorLingerMs: wholeNumber(0, 60000, 'milliseconds').default(2000),
    // Seconds an instance waits while another one migrates (db/migrate.ts); unset: 60.
    migrationLockTimeoutSeconds: wholeNumber(1, 3600, 'seconds').optional(),
    // Read replicas of DATABASE_URL's database (db/client.ts, openDatabase): a comma list of mysql:// URLs.
    databaseReadUrls: z
      .union([
        z.array(z.string()),
        z.string().transform((value) =>
          value
            .split(',')
            .map((url) => url.trim())
            .filter(Boolean),
        ),
      ])
      .pipe(
        z.array(
          z
            .string()
            .regex(
              /^mysql:\/\/[^/]+\/[A-Za-z0-9_]{1,64}$/,
              'must be a comma list of mysql://user:password@host:3306/database URLs',
            ),
        ),
      )
      .optional(),
    // The gateway's public address (https://host, no path): the reference page's first server, where "Try it out" goes.
    publicUrl: z
      .string()
      .regex(
        /^https?:\/\/[^/?#\s]+$/,
        "must be the gateway's public origin, like https://jobs-api.example.org (no path)",
      )
      .optional(),
  })
  .refine((config) => !config.gatewaySecretNext || config.gatewaySecret, {
    message: 'is set without GATEWAY_SECRET: the next secret is accepted beside the current one, never instead of it',
    path: ['gatewaySecretNext'],
  });
export type Config = z.infer<typeof Config>;

const ENV_NAMES: Record<keyof Config, string> = {
  port: 'PORT',
  host: 'HOST',
  databaseUrl: 'DATABASE_URL',
  gatewaySecret: 'GATEWAY_SECRET',
  gatewaySecretNext: 'GATEWAY_SECRET_NEXT',
  dbPoolSize: 'DB_POOL_SIZE',
  logLevel: 'LOG_LEVEL',
  seedDemoData: 'SEED_DEMO_DATA',
  dbConnectTimeoutMs: 'DB_CONNECT_TIMEOUT_MS',
  dbQueryTimeoutMs: 'DB_QUERY_TIMEOUT_MS',
  dbQueueLimit: 'DB_QUEUE_LIMIT',
  readyTimeoutMs: 'READY_TIMEOUT_MS',
  shutdownGraceMs: 'SHUTDOWN_GRACE_MS',
  clientErrorLingerMs: 'CLIENT_ERROR_LINGER_MS',
  headersTimeoutMs: 'HEADERS_TIMEOUT_MS',
  bodyReadTimeoutMs: 'BODY_READ_TIMEOUT_MS',
  metricsPort: 'METRICS_PORT',
  migrationLockTimeoutSeconds: 'MIGRATION_LOCK_TIMEOUT_SECONDS',
  databaseReadUrls: 'DATABASE_READ_URLS',
  publicUrl: 'PUBLIC_URL',
};

export class ConfigError extends Error {}

/** Reads the environment; throws one ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  // An unset variable reads as undefined, which zod answers with the default.
  const raw = Object.fromEntries(Object.entries(ENV_NAMES).map(([key, name]) => [key, env[name]]));
  const parsed = Config.safeParse({ ...raw, ...overrides });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = issue.path[0] as keyof Config;
      return `${ENV_NAMES[key] ?? String(key)} ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

import { isIP } from 'node:net';
import { z } from 'zod';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A whole number in [min, max], from the environment (digits only) or from runService's overrides, with one message for every way it can be wrong. */
const whole = (min: number, max: number, message: string) =>
  z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)], { error: message })
    .pipe(z.number().int(message).min(min, message).max(max, message));
const wholeNumber = (min: number, max: number, unit: string) =>
  whole(min, max, `must be a whole number of ${unit} from ${min} to ${max}`);
// The WEBHOOK_* numbers say which bound was crossed.
const ms = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)], {
      error: `must be a whole number of milliseconds from ${min} to ${max}`,
    })
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
/** true or false, false when unset. */
const flag = z
  .union([z.boolean(), z.enum(['true', 'false'])], { error: 'must be true or false' })
  .default(false)
  .transform((value) => value === true || value === 'true');
const cidr = (value: string) => {
  const [network, prefix, ...rest] = value.split('/');
  const family = isIP(network ?? '');
  const bits = prefix === undefined ? (family === 6 ? 128 : 32) : /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
  return family !== 0 && rest.length === 0 && bits >= 0 && bits <= (family === 6 ? 128 : 32);
};
const commaList = (value: string) =>
  value
    .split(',')
    .map((one) => one.trim())
    .filter(Boolean);

/** A key from WEBHOOK_SECRETS_KEY (or one of WEBHOOK_SECRETS_KEY_PREVIOUS): 32 bytes in base64 or hex, sealing secrets so a database dump alone does not reveal them. */
export function parseSecretsKey(value: string | undefined, variable = 'WEBHOOK_SECRETS_KEY'): Buffer {
  const text = (value ?? '').trim();
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32 || (!/^[0-9a-f]{64}$/i.test(text) && key.toString('base64') !== text)) {
    throw new Error(
      `${variable} must be 32 random bytes in base64 or hex, e.g. ${variable}=$(openssl rand -base64 32)`,
    );
  }
  return key;
}

/** What the API and the dispatcher know of webhooks (docs/operations.md, the WEBHOOK_* variables). */
export interface WebhookSettings {
  /** Unset: webhooks cannot be created (the API answers 503) and the dispatcher does not start. */
  secretsKey?: Buffer;
  /** WEBHOOK_SECRETS_KEY_PREVIOUS: keys that still open what they sealed, until a re-seal moves it to secretsKey. */
  previousSecretsKeys?: Buffer[];
  /** Where a partner's URL may lead (service/webhooks/url-guard.ts, UrlPolicy). */
  policy: { allowHttp: boolean; allowed: readonly string[] };
  retry: { firstMs: number; maxMs: number; giveUpAfterMs: number };
  leaseMs: number;
  pollMs: number;
  timeoutMs: number;
  /** Subscriptions one consumer may hold at once. */
  subscriptionLimit: number;
}

/** The WEBHOOK_* variables, which both processes read (docs/operations.md), under their settings' names. */
const WebhookVariables = z.object({
  // The key that seals subscriptions' secrets: unset, webhooks cannot be created and the dispatcher does not start.
  webhookSecretsKey: z
    .string()
    .optional()
    .transform((value) => (value === '' ? undefined : value)),
  // During a rotation: the keys that sealed before, a comma list; they open, never seal.
  webhookSecretsKeyPrevious: z.string().default('').transform(commaList),
  // Development settings (npm start sets them): plain http, and addresses that are not public.
  webhookAllowHttp: flag,
  webhookAllowedAddresses: z
    .string()
    .default('')
    .transform(commaList)
    .pipe(z.array(z.string().refine(cidr, 'must be a comma list of addresses or CIDR ranges, e.g. 127.0.0.0/8,::1'))),
  // Retry schedule: the first wait, doubled per attempt (with jitter) up to the longest.
  webhookRetryFirstMs: ms(10, 3_600_000).default(5_000),
  webhookRetryMaxMs: ms(10, 86_400_000).default(10 * 3_600_000),
  webhookGiveUpMs: ms(1000, 30 * 86_400_000).default(3 * 86_400_000),
  webhookLeaseMs: ms(1000, 600_000).default(30_000),
  webhookPollMs: ms(10, 60_000).default(200),
  webhookTimeoutMs: ms(100, 10_000).default(10_000),
  webhookSubscriptionLimit: z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)], { error: 'must be a whole number from 1 to 100' })
    .pipe(z.number().int().min(1, 'must be at least 1').max(100, 'must be at most 100'))
    .default(5),
});

/** WEBHOOK_* as the service's routes and the dispatcher use them; a key that does not parse names its variable in its message. */
function webhookSettings(variables: z.output<typeof WebhookVariables>, context: z.RefinementCtx): WebhookSettings {
  const keys = (values: string[], variable?: string) => {
    try {
      return values.map((one) => parseSecretsKey(one, variable));
    } catch (error) {
      context.addIssue({ code: 'custom', message: (error as Error).message, path: [] });
      return [];
    }
  };
  const sealing = variables.webhookSecretsKey;
  const [secretsKey] = sealing === undefined ? [] : keys([sealing]);
  const previous = keys(variables.webhookSecretsKeyPrevious, 'WEBHOOK_SECRETS_KEY_PREVIOUS (each of its comma list)');
  if (variables.webhookLeaseMs < variables.webhookTimeoutMs * 2)
    context.addIssue({
      code: 'custom',
      message: 'must be at least twice WEBHOOK_TIMEOUT_MS',
      path: ['webhookLeaseMs'],
    });
  if (sealing === undefined && variables.webhookSecretsKeyPrevious.length > 0)
    context.addIssue({
      code: 'custom',
      message: 'is set without WEBHOOK_SECRETS_KEY, the key that seals',
      path: ['webhookSecretsKeyPrevious'],
    });
  return {
    secretsKey,
    previousSecretsKeys: previous,
    policy: { allowHttp: variables.webhookAllowHttp, allowed: variables.webhookAllowedAddresses },
    retry: {
      firstMs: variables.webhookRetryFirstMs,
      maxMs: variables.webhookRetryMaxMs,
      giveUpAfterMs: variables.webhookGiveUpMs,
    },
    leaseMs: variables.webhookLeaseMs,
    pollMs: variables.webhookPollMs,
    timeoutMs: variables.webhookTimeoutMs,
    subscriptionLimit: variables.webhookSubscriptionLimit,
  };
}

/** Every setting of both processes, parsed once at start-up: each process takes what it needs. */
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
    seedDemoData: flag,
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
    // The dispatcher's Prometheus metrics on a port of their own (empty: none, as compose may pass it).
    webhookMetricsPort: z.preprocess(
      (value) => (value === '' ? undefined : value),
      whole(0, 65535, 'must be a port number (0-65535)').optional(),
    ),
    // Config.parse({}) gives every default, these too.
    webhooks: WebhookVariables.transform(webhookSettings).prefault({}),
  })
  .refine((config) => !config.gatewaySecretNext || config.gatewaySecret, {
    message: 'is set without GATEWAY_SECRET: the next secret is accepted beside the current one, never instead of it',
    path: ['gatewaySecretNext'],
  });
export type Config = z.infer<typeof Config>;

type Names<Schema extends z.ZodObject> = Record<keyof z.input<Schema>, string>;
const WEBHOOK_ENV_NAMES: Names<typeof WebhookVariables> = {
  webhookSecretsKey: 'WEBHOOK_SECRETS_KEY',
  webhookSecretsKeyPrevious: 'WEBHOOK_SECRETS_KEY_PREVIOUS',
  webhookAllowHttp: 'WEBHOOK_ALLOW_HTTP',
  webhookAllowedAddresses: 'WEBHOOK_ALLOWED_ADDRESSES',
  webhookRetryFirstMs: 'WEBHOOK_RETRY_FIRST_MS',
  webhookRetryMaxMs: 'WEBHOOK_RETRY_MAX_MS',
  webhookGiveUpMs: 'WEBHOOK_GIVE_UP_MS',
  webhookLeaseMs: 'WEBHOOK_LEASE_MS',
  webhookPollMs: 'WEBHOOK_POLL_MS',
  webhookTimeoutMs: 'WEBHOOK_TIMEOUT_MS',
  webhookSubscriptionLimit: 'WEBHOOK_SUBSCRIPTION_LIMIT',
};
const ENV_NAMES: Omit<Names<typeof Config>, 'webhooks'> = {
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
  webhookMetricsPort: 'WEBHOOK_METRICS_PORT',
};
const NAMES: Record<string, string> = { ...ENV_NAMES, ...WEBHOOK_ENV_NAMES };

export class ConfigError extends Error {}

/** Reads the environment (runService's overrides in place of some variables); throws one ConfigError naming every bad variable. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Omit<Config, 'webhooks'>> = {},
): Config {
  // An unset variable reads as undefined, which zod answers with the default.
  const read = (names: Record<string, string>) =>
    Object.fromEntries(Object.entries(names).map(([key, name]) => [key, env[name]]));
  const parsed = Config.safeParse({ ...read(ENV_NAMES), ...overrides, webhooks: read(WEBHOOK_ENV_NAMES) });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = issue.path.map((key) => NAMES[String(key)]).find(Boolean);
      // A secrets key that does not parse names its variable in its own message.
      return name ? `${name} ${issue.message}` : issue.message;
    });
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

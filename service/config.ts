import { z } from 'zod';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Everything the service reads from its environment, parsed once at start-up. */
export const Config = z.object({
  port: z.coerce.number({ error: 'must be a port number (0-65535)' }).int('must be a port number (0-65535)').min(0, 'must be a port number (0-65535)').max(65535, 'must be a port number (0-65535)').default(3000),
  // Loopback by default: partners reach the service only through the gateway. Containers set
  // HOST=0.0.0.0 on a private network.
  host: z.string().min(1).default('127.0.0.1'),
  databaseUrl: z
    .string()
    .default('mysql://root@127.0.0.1:3306/jobs')
    .refine((value) => /^mysql:\/\/[^/]+\/[A-Za-z0-9_]{1,64}$/.test(value), {
      message: 'must look like mysql://user:password@host:3306/database',
    }),
  // When set, only requests carrying it in X-Gateway-Secret are served (the gateway adds it).
  gatewaySecret: z.string().min(16, 'must be at least 16 characters').optional(),
  dbPoolSize: z.coerce.number({ error: 'must be a whole number from 1 to 100' }).int('must be a whole number from 1 to 100').min(1, 'must be a whole number from 1 to 100').max(100, 'must be a whole number from 1 to 100').default(10),
  logLevel: z.enum(LOG_LEVELS).default('info'),
});
export type Config = z.infer<typeof Config>;

const ENV_NAMES: Record<keyof Config, string> = {
  port: 'PORT',
  host: 'HOST',
  databaseUrl: 'DATABASE_URL',
  gatewaySecret: 'GATEWAY_SECRET',
  dbPoolSize: 'DB_POOL_SIZE',
  logLevel: 'LOG_LEVEL',
};

export class ConfigError extends Error {}

/** Reads the environment; throws one ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(ENV_NAMES)) {
    if (env[name] !== undefined) raw[key] = env[name];
  }
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

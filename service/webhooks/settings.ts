import { isIP } from 'node:net';
import { z } from 'zod';
import { parseSecretsKey, type Keyring } from './secrets';
import type { UrlPolicy } from './url-guard';

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
const ms = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)], {
      error: `must be a whole number of milliseconds from ${min} to ${max}`,
    })
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

/** What the API and the dispatcher read from the environment about webhooks (docs/operations.md). */
export const WebhookEnv = z.object({
  WEBHOOK_SECRETS_KEY: z.string().optional(),
  // During a rotation: the keys that sealed before, a comma list; they open, never seal.
  WEBHOOK_SECRETS_KEY_PREVIOUS: z.string().optional(),
  // Development settings (npm start sets them): plain http, and addresses that are not public.
  WEBHOOK_ALLOW_HTTP: flag,
  WEBHOOK_ALLOWED_ADDRESSES: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((one) => one.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().refine(cidr, 'must be a comma list of addresses or CIDR ranges, e.g. 127.0.0.0/8,::1'))),
  // Retry schedule: the first wait, doubled per attempt (with jitter) up to the longest.
  WEBHOOK_RETRY_FIRST_MS: ms(10, 3_600_000).default(5_000),
  WEBHOOK_RETRY_MAX_MS: ms(10, 86_400_000).default(10 * 3_600_000),
  WEBHOOK_GIVE_UP_MS: ms(1000, 30 * 86_400_000).default(3 * 86_400_000),
  WEBHOOK_LEASE_MS: ms(1000, 600_000).default(30_000),
  WEBHOOK_POLL_MS: ms(10, 60_000).default(200),
  WEBHOOK_TIMEOUT_MS: ms(100, 10_000).default(10_000),
  WEBHOOK_SUBSCRIPTION_LIMIT: z
    .union([z.number(), z.string().regex(/^\d+$/).transform(Number)], { error: 'must be a whole number from 1 to 100' })
    .pipe(z.number().int().min(1, 'must be at least 1').max(100, 'must be at most 100'))
    .default(5),
});

export interface WebhookSettings {
  /** Unset: webhooks cannot be created (the API answers 503) and the dispatcher does not start. */
  secretsKey?: Buffer;
  /** WEBHOOK_SECRETS_KEY_PREVIOUS: keys that still open what they sealed, until a re-seal moves it to secretsKey. */
  previousSecretsKeys?: Buffer[];
  policy: UrlPolicy;
  retry: { firstMs: number; maxMs: number; giveUpAfterMs: number };
  leaseMs: number;
  pollMs: number;
  timeoutMs: number;
  /** Subscriptions one consumer may hold at once. */
  subscriptionLimit: number;
}

/** What the webhook routes are given besides the database. */
export interface WebhookRouteSettings {
  webhooks: WebhookSettings;
}

/** Reads the webhook variables; throws one Error naming every bad one. */
export function loadWebhookSettings(env: NodeJS.ProcessEnv = process.env): WebhookSettings {
  const parsed = WebhookEnv.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `Invalid configuration: ${parsed.error.issues.map((issue) => `${String(issue.path[0])} ${issue.message}`).join('; ')}`,
    );
  }
  const e = parsed.data;
  if (e.WEBHOOK_LEASE_MS < e.WEBHOOK_TIMEOUT_MS * 2)
    throw new Error('Invalid configuration: WEBHOOK_LEASE_MS must be at least twice WEBHOOK_TIMEOUT_MS');
  const previous = (e.WEBHOOK_SECRETS_KEY_PREVIOUS ?? '')
    .split(',')
    .map((one) => one.trim())
    .filter(Boolean);
  const secretsKey =
    e.WEBHOOK_SECRETS_KEY === undefined || e.WEBHOOK_SECRETS_KEY === ''
      ? undefined
      : parseSecretsKey(e.WEBHOOK_SECRETS_KEY);
  if (!secretsKey && previous.length > 0)
    throw new Error(
      'Invalid configuration: WEBHOOK_SECRETS_KEY_PREVIOUS is set without WEBHOOK_SECRETS_KEY, the key that seals',
    );
  return {
    secretsKey,
    previousSecretsKeys: previous.map((one) =>
      parseSecretsKey(one, 'WEBHOOK_SECRETS_KEY_PREVIOUS (each of its comma list)'),
    ),
    policy: { allowHttp: e.WEBHOOK_ALLOW_HTTP, allowed: e.WEBHOOK_ALLOWED_ADDRESSES },
    retry: { firstMs: e.WEBHOOK_RETRY_FIRST_MS, maxMs: e.WEBHOOK_RETRY_MAX_MS, giveUpAfterMs: e.WEBHOOK_GIVE_UP_MS },
    leaseMs: e.WEBHOOK_LEASE_MS,
    pollMs: e.WEBHOOK_POLL_MS,
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    subscriptionLimit: e.WEBHOOK_SUBSCRIPTION_LIMIT,
  };
}

/** The keyring the settings hold: WEBHOOK_SECRETS_KEY seals, it and WEBHOOK_SECRETS_KEY_PREVIOUS open. */
export const keyringOf = (
  settings: Pick<WebhookSettings, 'previousSecretsKeys'> & { secretsKey: Buffer },
): Keyring => ({ current: settings.secretsKey, previous: settings.previousSecretsKeys ?? [] });

/** Exponential backoff with jitter: the n-th retry waits between half and all of first x 2^(n-1), capped. */
export function retryDelay(
  attempt: number,
  retry: WebhookSettings['retry'],
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(retry.maxMs, retry.firstMs * 2 ** Math.min(attempt - 1, 40));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** A span of milliseconds as a partner reads it: "3 days", "36 hours", "90 minutes", "10 s". */
export function spoken(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
  ];
  for (const [size, name] of units)
    if (ms >= size && ms % size === 0) return `${ms / size} ${name}${ms === size ? '' : 's'}`;
  return `${Number((ms / 1000).toFixed(1))} s`;
}

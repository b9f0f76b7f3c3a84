import type { WebhookSettings } from '../config';
import type { Keyring } from './secrets';

/** What the webhook routes are given besides the database. */
export interface WebhookRouteSettings {
  webhooks: WebhookSettings;
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

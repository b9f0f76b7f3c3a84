import type { SubscriptionView } from '../../db/webhooks/subscriptions';
import { badRequest, MESSAGES, webhooksUnavailable } from '../errors';
import { decodeSince, encodeSince } from '../http/tokens';
import type { Webhook } from './contract';
import type { WebhookSettings } from './settings';

/** A subscription as its owner sees it: the position as a feed token, never the secret or the lease. */
export function toWebhook(key: Buffer, row: SubscriptionView): Webhook {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    status: row.status,
    position: encodeSince(key, row.position),
    createdAt: row.createdAt.toISOString(),
    lastDeliveredAt: row.lastDeliveredAt?.toISOString() ?? null,
    failingSince: row.failingSince?.toISOString() ?? null,
    nextAttemptAt: row.status === 'active' && row.failingSince !== null ? (row.nextAttemptAt?.toISOString() ?? null) : null,
    disabledReason: row.disabledReason,
    lastError: row.lastError,
  };
}

/** A position token from the partner: one this API signed, or a 400 saying what to send. */
export function positionOf(key: Buffer, token: string): number {
  try {
    return decodeSince(key, token);
  } catch {
    throw badRequest(MESSAGES.positionInvalid);
  }
}

/** The key secrets are sealed with; without one the server stores no secret, so it answers 503. */
export function sealingKey(settings: WebhookSettings): Buffer {
  if (!settings.secretsKey) throw webhooksUnavailable();
  return settings.secretsKey;
}

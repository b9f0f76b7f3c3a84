import type { Database } from '../../db/client';
import { signingKey } from '../../db/signing-key';
import type { AttemptView } from '../../db/webhooks/attempts';
import { eventTypesOf, type SubscriptionView } from '../../db/webhooks/subscriptions';
import { badRequest, MESSAGES, webhookNotFound, webhooksUnavailable } from '../errors';
import { decodeSince, encodeSince } from '../http/tokens';
import type { Attempt, Webhook } from './contract';
import type { WebhookSettings } from './settings';
import { checkUrl, UrlRefused, type UrlPolicy } from './url-guard';

/** A subscription as its owner sees it: the position as a feed token, never the secret or the lease. */
export function toWebhook(key: Buffer, row: SubscriptionView): Webhook {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    status: row.status,
    eventTypes: eventTypesOf(row.eventTypes),
    position: encodeSince(key, row.position),
    createdAt: row.createdAt.toISOString(),
    lastDeliveredAt: row.lastDeliveredAt?.toISOString() ?? null,
    failingSince: row.failingSince?.toISOString() ?? null,
    nextAttemptAt: row.status === 'active' && row.failingSince !== null ? (row.nextAttemptAt?.toISOString() ?? null) : null,
    disabledReason: row.disabledReason,
    lastError: row.lastError,
  };
}

/** An attempt as its owner reads it: the position as a feed token (none for a test event). */
export function toAttempt(key: Buffer, row: AttemptView): Attempt {
  return { ...row, position: row.position === null ? null : encodeSince(key, row.position), attemptedAt: row.attemptedAt.toISOString() };
}

/** A position token from the partner: one this API signed, or a 400 saying what to send. */
export function positionOf(key: Buffer, token: string): number {
  try {
    return decodeSince(key, token);
  } catch {
    throw badRequest(MESSAGES.positionInvalid);
  }
}

/** A partner's URL checked as at create, or a 400 with the guard's message (which names nothing of our network). */
export async function checkedUrl(raw: string, policy: UrlPolicy): Promise<void> {
  try {
    await checkUrl(raw, policy);
  } catch (error) {
    if (error instanceof UrlRefused) throw badRequest(error.message);
    throw error;
  }
}

/** The key secrets are sealed with; without one the server stores no secret, so it answers 503. */
export function sealingKey(settings: WebhookSettings): Buffer {
  if (!settings.secretsKey) throw webhooksUnavailable();
  return settings.secretsKey;
}

/** The answer for one of the caller's subscriptions, or the 404 an unknown or another's id gets. */
export async function webhookAnswer(db: Database, row: SubscriptionView | undefined): Promise<{ data: Webhook }> {
  if (!row) throw webhookNotFound();
  return { data: toWebhook(await signingKey(db), row) };
}

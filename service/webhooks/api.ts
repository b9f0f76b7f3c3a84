import type { Database } from '../../db/client';
import { signingKey } from '../../db/signing-key';
import { primaryOf } from '../../db/sql';
import {
  createSubscription,
  deleteSubscription,
  enableSubscription,
  findSubscription,
  listSubscriptions,
  replayFrom,
  rotateSecret,
  type SubscriptionView,
} from '../../db/webhooks/subscriptions';
import { badRequest, MESSAGES, webhookLimit, webhookNotFound, webhooksUnavailable } from '../errors';
import { decodeSince, encodeSince } from '../jobs/http/tokens';
import { ROTATION_OVERLAP_MS, SUBSCRIPTION_LIMIT, type CreateWebhookBody, type Webhook } from './contract';
import { encryptSecret, newSecret } from './secrets';
import type { WebhookSettings } from './settings';
import { checkUrl, UrlRefused } from './url-guard';

/** The webhook routes' work once the router parsed their input; another consumer's subscription is a 404 like an unknown id. */

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

export function toWebhook(key: Buffer, row: SubscriptionView): Webhook {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    status: row.status,
    position: encodeSince(key, row.position),
    createdAt: row.createdAt.toISOString(),
    lastDeliveredAt: iso(row.lastDeliveredAt),
    failingSince: iso(row.failingSince),
    nextAttemptAt: row.status === 'active' && row.failingSince !== null ? iso(row.nextAttemptAt) : null,
    disabledReason: row.disabledReason,
    lastError: row.lastError,
  };
}

/** A position token from the partner: one this API signed, or a 400 saying what to send. */
function positionOf(key: Buffer, token: string): number {
  try {
    return decodeSince(key, token);
  } catch {
    throw badRequest(MESSAGES.positionInvalid);
  }
}

function sealingKey(settings: WebhookSettings): Buffer {
  if (!settings.secretsKey) throw webhooksUnavailable();
  return settings.secretsKey;
}

export async function createWebhook(db: Database, settings: WebhookSettings, consumer: { id: string; username?: string }, input: CreateWebhookBody) {
  const sealKey = sealingKey(settings);
  try {
    await checkUrl(input.url, settings.policy);
  } catch (error) {
    if (error instanceof UrlRefused) throw badRequest(error.message);
    throw error;
  }
  const primary = primaryOf(db);
  const key = await signingKey(db);
  const position = input.position === undefined ? undefined : positionOf(key, input.position);
  const secret = newSecret();
  const created = await createSubscription(
    primary,
    { consumerId: consumer.id, consumerName: consumer.username ?? null, url: input.url, description: input.description ?? null, secret: encryptSecret(sealKey, secret), position },
    SUBSCRIPTION_LIMIT,
  );
  if (created === 'limit') throw webhookLimit();
  if (created === 'ahead') throw badRequest(MESSAGES.positionAhead);
  return { data: { ...toWebhook(key, created), secret } };
}

export async function listWebhooks(db: Database, consumerId: string) {
  const key = await signingKey(db);
  return { data: (await listSubscriptions(primaryOf(db), consumerId)).map((row) => toWebhook(key, row)) };
}

export async function getWebhook(db: Database, consumerId: string, id: string) {
  const row = await findSubscription(primaryOf(db), consumerId, id);
  if (!row) throw webhookNotFound();
  return { data: toWebhook(await signingKey(db), row) };
}

export async function deleteWebhook(db: Database, consumerId: string, id: string): Promise<void> {
  if (!(await deleteSubscription(primaryOf(db), consumerId, id))) throw webhookNotFound();
}

export async function rotateWebhookSecret(db: Database, settings: WebhookSettings, consumerId: string, id: string) {
  const secret = newSecret();
  const at = Date.now();
  if (!(await rotateSecret(primaryOf(db), consumerId, id, encryptSecret(sealingKey(settings), secret), ROTATION_OVERLAP_MS))) throw webhookNotFound();
  return { data: { id, secret, previousSecretExpiresAt: new Date(at + ROTATION_OVERLAP_MS).toISOString() } };
}

export async function replayWebhook(db: Database, consumerId: string, id: string, token: string) {
  const key = await signingKey(db);
  const result = await replayFrom(primaryOf(db), consumerId, id, positionOf(key, token));
  if (result === undefined) throw webhookNotFound();
  if (typeof result === 'string') throw badRequest(MESSAGES.positionAhead);
  return { data: toWebhook(key, result) };
}

export async function enableWebhook(db: Database, consumerId: string, id: string) {
  const row = await enableSubscription(primaryOf(db), consumerId, id);
  if (!row) throw webhookNotFound();
  return { data: toWebhook(await signingKey(db), row) };
}

import type { Database } from '../../db/client';
import { signingKey } from '../../db/signing-key';
import { primaryOf } from '../../db/sql';
import { isUuid } from '../../db/schema';
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
import { HttpError, validationFailed } from '../errors';
import { decodeSince, encodeSince } from '../jobs/http/tokens';
import { CreateWebhookBody, ReplayBody, ROTATION_OVERLAP_MS, SUBSCRIPTION_LIMIT, type Webhook } from './contract';
import { encryptSecret, newSecret } from './secrets';
import type { WebhookSettings } from './settings';
import { checkUrl, UrlRefused } from './url-guard';
import type { z } from 'zod';

/**
 * What each webhook route does, apart from HTTP: the routes parse nothing themselves and call
 * these with the caller's consumer id. Another consumer's subscription is "not found", exactly
 * like an unknown id (no one learns which ids exist).
 */
export const webhookNotFound = () => new HttpError(404, 'Webhook not found');
const AHEAD = 'position is ahead of this feed (the data was restored from a backup?): read the feed again and subscribe with its nextSince';

const iso = (value: Date | null) => (value === null ? null : value.toISOString());

export function toWebhook(key: Buffer, row: SubscriptionView): Webhook {
  const failing = row.failingSince !== null || row.status === 'disabled';
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    status: row.status,
    position: encodeSince(key, row.position),
    createdAt: row.createdAt.toISOString(),
    lastDeliveredAt: iso(row.lastDeliveredAt),
    failingSince: iso(row.failingSince),
    nextAttemptAt: failing && row.status === 'active' ? iso(row.nextAttemptAt) : null,
    disabledReason: row.disabledReason,
    lastError: row.lastError,
  };
}

/** Parses a body with its schema, every problem at once (the create route's Validation failed shape). */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw validationFailed(parsed.error.issues.map((issue) => ({ field: issue.path.map(String).join('.') || 'body', message: issue.message })));
}

/** A position token from the partner: one this API signed, or a 400 saying what to send. */
function positionOf(key: Buffer, token: string): number {
  try {
    return decodeSince(key, token);
  } catch {
    throw new HttpError(400, 'position is not valid: pass meta.nextSince of GET /api/v1/jobs/changes, or an event\'s position, exactly as it was given');
  }
}

function sealing(settings: WebhookSettings): Buffer {
  if (!settings.secretsKey) throw new HttpError(503, 'Webhooks are not available on this server right now', {}, { 'Retry-After': '60' });
  return settings.secretsKey;
}

export async function createWebhook(db: Database, settings: WebhookSettings, consumer: { id: string; username?: string }, body: unknown) {
  const consumerId = consumer.id;
  const input = parseBody(CreateWebhookBody, body);
  const sealKey = sealing(settings);
  try {
    await checkUrl(input.url, settings.policy);
  } catch (error) {
    if (error instanceof UrlRefused) throw new HttpError(400, error.message);
    throw error;
  }
  const primary = primaryOf(db);
  const key = await signingKey(db);
  const position = input.position === undefined ? undefined : positionOf(key, input.position);
  const secret = newSecret();
  const created = await createSubscription(primary, { consumerId, consumerName: consumer.username ?? null, url: input.url, description: input.description ?? null, secret: encryptSecret(sealKey, secret), position }, SUBSCRIPTION_LIMIT);
  if (created === 'limit') throw new HttpError(409, `A key may hold at most ${SUBSCRIPTION_LIMIT} webhook subscriptions: delete one first`);
  if (created === 'ahead') throw new HttpError(400, AHEAD);
  return { data: { ...toWebhook(key, created), secret } };
}

export async function listWebhooks(db: Database, consumerId: string) {
  const key = await signingKey(db);
  return { data: (await listSubscriptions(primaryOf(db), consumerId)).map((row) => toWebhook(key, row)) };
}

export async function getWebhook(db: Database, consumerId: string, id: string) {
  const row = isUuid(id) ? await findSubscription(primaryOf(db), consumerId, id) : undefined;
  if (!row) throw webhookNotFound();
  return { data: toWebhook(await signingKey(db), row) };
}

export async function deleteWebhook(db: Database, consumerId: string, id: string): Promise<void> {
  if (!isUuid(id) || !(await deleteSubscription(primaryOf(db), consumerId, id))) throw webhookNotFound();
}

export async function rotateWebhookSecret(db: Database, settings: WebhookSettings, consumerId: string, id: string) {
  if (!isUuid(id)) throw webhookNotFound();
  const secret = newSecret();
  const at = Date.now();
  if (!(await rotateSecret(primaryOf(db), consumerId, id, encryptSecret(sealing(settings), secret), ROTATION_OVERLAP_MS))) throw webhookNotFound();
  return { data: { id, secret, previousSecretExpiresAt: new Date(at + ROTATION_OVERLAP_MS).toISOString() } };
}

export async function replayWebhook(db: Database, consumerId: string, id: string, body: unknown) {
  const input = parseBody(ReplayBody, body);
  if (!isUuid(id)) throw webhookNotFound();
  const key = await signingKey(db);
  const result = await replayFrom(primaryOf(db), consumerId, id, positionOf(key, input.position));
  if (result === undefined) throw webhookNotFound();
  if (result === 'ahead' || result === 'limit') throw new HttpError(400, AHEAD);
  return { data: toWebhook(key, result) };
}

export async function enableWebhook(db: Database, consumerId: string, id: string) {
  const row = isUuid(id) ? await enableSubscription(primaryOf(db), consumerId, id) : undefined;
  if (!row) throw webhookNotFound();
  return { data: toWebhook(await signingKey(db), row) };
}

import type { Database } from '../../../db/client';
import { signingKey } from '../../../db/signing-key';
import type { AttemptView } from '../../../db/webhooks/attempts';
import { eventTypesOf, type SubscriptionView } from '../../../db/webhooks/subscriptions';
import { MESSAGES, webhookNotFound } from '../../errors';
import { ENCODING_HEADERS } from '../../http/headers';
import { errorResponse, ValidationErrorBody } from '../../http/responses';
import type { Handler, RouteDependencies } from '../../http/route';
import { encodeSince } from '../../http/tokens';
import { WEBHOOK_EXAMPLE, WebhookEnvelope, WebhookIdParams, type Attempt, type Webhook } from '../contract';

/** The answers several webhook routes document alike. */
export const notFound = errorResponse('No subscription of yours has this id', MESSAGES.webhookNotFound);
export const notJson = errorResponse('Content-Type is not application/json, or an unsupported body encoding', MESSAGES.notJson, ENCODING_HEADERS);
export const invalid = (description: string) => ({
  description,
  body: ValidationErrorBody,
  example: { error: MESSAGES.validationFailed, details: [{ field: 'url', message: 'url is required' }] },
});

/** What a route on one of the caller's own subscriptions declares: its scope, the id in its path, the caller, a database turn. */
export const OWN_SUBSCRIPTION = { scope: 'jobs:read', tag: 'webhooks', params: WebhookIdParams, consumer: 'required', database: true } as const;

/** A subscription as the answer (`description` says in what state), or the 404 for an id not the caller's. */
export const subscriptionAnswer = (description: string) => ({ '200': { description, body: WebhookEnvelope, example: { data: WEBHOOK_EXAMPLE } }, '404': notFound });

/** The handler of a route that answers the caller's subscription as `step` leaves it (read, enabled...), or the 404. */
export const answerSubscription =
  (step: (db: Database, consumerId: string, id: string) => Promise<SubscriptionView | undefined>) =>
  ({ db }: RouteDependencies): Handler<{ id: string }> =>
  async (ctx, { params: { id } }) => {
    ctx.body = await webhookAnswer(db, await step(db, ctx.state.consumer!.id, id));
  };

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

/** The answer for one of the caller's subscriptions, or the 404 an unknown or another's id gets. */
export async function webhookAnswer(db: Database, row: SubscriptionView | undefined): Promise<{ data: Webhook }> {
  if (!row) throw webhookNotFound();
  return { data: toWebhook(await signingKey(db), row) };
}

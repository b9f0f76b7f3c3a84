import type { Database } from '../../../db/client';
import type { SubscriptionView } from '../../../db/webhooks/subscriptions';
import { MESSAGES } from '../../errors';
import { ENCODING_HEADERS } from '../../headers';
import { errorResponse, ValidationErrorBody } from '../../http/responses';
import type { Handler, RouteDependencies } from '../../http/route';
import { WEBHOOK_EXAMPLE, WebhookEnvelope, WebhookIdParams } from '../contract';
import { webhookAnswer } from '../route-support';

/** The answers several webhook routes document alike. */
export const notFound = errorResponse('No subscription of yours has this id', MESSAGES.webhookNotFound);
export const notJson = errorResponse(
  'Content-Type is not application/json, or an unsupported body encoding',
  MESSAGES.notJson,
  ENCODING_HEADERS,
);
export const invalid = (description: string) => ({
  description,
  body: ValidationErrorBody,
  example: { error: MESSAGES.validationFailed, details: [{ field: 'url', message: 'url is required' }] },
});

/** What a route on one of the caller's own subscriptions declares: its scope, the id in its path, the caller, a database turn. */
export const OWN_SUBSCRIPTION = {
  scope: 'jobs:read',
  tag: 'webhooks',
  params: WebhookIdParams,
  consumer: 'required',
  database: true,
} as const;

/** A subscription as the answer (`description` says in what state), or the 404 for an id not the caller's. */
export const subscriptionAnswer = (description: string) => ({
  '200': { description, body: WebhookEnvelope, example: { data: WEBHOOK_EXAMPLE } },
  '404': notFound,
});

/** The handler of a route that answers the caller's subscription as `step` leaves it (read, enabled...), or the 404. */
export const answerSubscription =
  (step: (db: Database, consumerId: string, id: string) => Promise<SubscriptionView | undefined>) =>
  ({ db }: RouteDependencies): Handler<{ id: string }> =>
  async (ctx, { params: { id } }) => {
    ctx.body = await webhookAnswer(db, await step(db, ctx.state.consumer!.id, id));
  };

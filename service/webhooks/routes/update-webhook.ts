import { signingKey } from '../../../db/signing-key';
import { storedEventTypes, updateSubscription, type SubscriptionChanges } from '../../../db/webhooks/subscriptions';
import { badRequest, MESSAGES, webhookNotFound } from '../../errors';
import { errorResponse } from '../../http/responses';
import { defineRoute, type RouteDependencies } from '../../http/route';
import { UPDATE_WEBHOOK_BODY, WEBHOOK_EXAMPLE, WebhookEnvelope, WebhookIdParams } from '../contract';
import type { WebhookRouteSettings } from '../settings';
import { checkedUrl, toWebhook } from '../view';
import { invalid, notFound, notJson } from './answers';

export const updateWebhookRoute = defineRoute({
  operationId: 'updateWebhook',
  method: 'patch',
  path: '/api/v1/webhooks/:id',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Change the url, description or event types; delivery goes on from the same position',
  params: WebhookIdParams,
  body: UPDATE_WEBHOOK_BODY,
  consumer: 'required',
  database: true,
  responses: {
    '200': { description: 'Changed', body: WebhookEnvelope, example: { data: { ...WEBHOOK_EXAMPLE, eventTypes: ['job.removed'] } } },
    '400': invalid('Nothing to change, a field is wrong (an unknown event type), or the url is refused as at create'),
    '404': notFound,
    '413': errorResponse('Body over 16 KB ("Request size limit exceeded" from the gateway)', 'Request size limit exceeded'),
    '415': notJson,
  },
  handler: ({ db, settings: { webhooks } }: RouteDependencies<WebhookRouteSettings>) => async (ctx, { params: { id }, body }) => {
    if (body.url === undefined && body.description === undefined && body.eventTypes === undefined) throw badRequest(MESSAGES.nothingToChange);
    const changes: SubscriptionChanges = { description: body.description };
    if (body.url !== undefined) {
      await checkedUrl(body.url, webhooks.policy);
      changes.url = body.url;
    }
    if (body.eventTypes !== undefined) changes.eventTypes = storedEventTypes(body.eventTypes);
    const row = await updateSubscription(db, ctx.state.consumer!.id, id, changes);
    if (!row) throw webhookNotFound();
    ctx.body = { data: toWebhook(await signingKey(db), row) };
  },
});

import { storedEventTypes, updateSubscription, type SubscriptionChanges } from '../../../db/webhooks/subscriptions';
import { badRequest, MESSAGES } from '../../errors';
import { errorResponse } from '../../http/responses';
import { defineRoute, type RouteDependencies } from '../../http/route';
import { UPDATE_WEBHOOK_BODY, WEBHOOK_EXAMPLE, WebhookEnvelope } from '../contract';
import type { WebhookRouteSettings } from '../settings';
import { checkedUrl, webhookAnswer } from '../route-support';
import { invalid, notFound, notJson, OWN_SUBSCRIPTION } from './answers';

export const updateWebhookRoute = defineRoute({
  operationId: 'updateWebhook',
  method: 'patch',
  path: '/api/v1/webhooks/:id',
  summary: 'Change the url, description or event types; delivery goes on from the same position',
  ...OWN_SUBSCRIPTION,
  body: UPDATE_WEBHOOK_BODY,
  responses: {
    '200': {
      description: 'Changed',
      body: WebhookEnvelope,
      example: { data: { ...WEBHOOK_EXAMPLE, eventTypes: ['job.removed'] } },
    },
    '400': invalid('Nothing to change, a field is wrong (an unknown event type), or the url is refused as at create'),
    '404': notFound,
    '413': errorResponse(
      'Body over 16 KB ("Request size limit exceeded" from the gateway)',
      'Request size limit exceeded',
    ),
    '415': notJson,
  },
  handler:
    ({ db, settings: { webhooks } }: RouteDependencies<WebhookRouteSettings>) =>
    async (ctx, { params: { id }, body }) => {
      if (body.url === undefined && body.description === undefined && body.eventTypes === undefined)
        throw badRequest(MESSAGES.nothingToChange);
      const changes: SubscriptionChanges = { description: body.description };
      if (body.url !== undefined) {
        await checkedUrl(body.url, webhooks.policy);
        changes.url = body.url;
      }
      if (body.eventTypes !== undefined) changes.eventTypes = storedEventTypes(body.eventTypes);
      ctx.body = await webhookAnswer(db, await updateSubscription(db, ctx.state.consumer!.id, id, changes));
    },
});

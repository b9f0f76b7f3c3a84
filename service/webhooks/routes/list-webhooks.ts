import { listSubscriptions } from '../../../db/webhooks/subscriptions';
import { defineRoute } from '../../http/route';
import { WEBHOOK_EXAMPLE, WebhookList } from '../contract';
import { feedPositions, toWebhook } from '../route-support';

export const listWebhooksRoute = defineRoute({
  operationId: 'listWebhooks',
  method: 'get',
  path: '/api/v1/webhooks',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Your webhook subscriptions, oldest first',
  consumer: 'required',
  database: true,
  responses: { '200': { description: 'Your subscriptions', body: WebhookList, example: { data: [WEBHOOK_EXAMPLE] } } },
  handler:
    ({ db }) =>
    async (ctx) => {
      const positions = await feedPositions(db);
      ctx.body = {
        data: (await listSubscriptions(db, ctx.state.consumer!.id)).map((row) => toWebhook(positions, row)),
      };
    },
});

import { replayFrom } from '../../../db/webhooks/subscriptions';
import { badRequest, MESSAGES, webhookNotFound } from '../../errors';
import { defineRoute } from '../../http/route';
import { REPLAY_BODY, WebhookIdParams } from '../contract';
import { feedPositions, toWebhook } from '../route-support';
import { invalid, notJson, subscriptionAnswer } from './answers';

export const replayWebhookRoute = defineRoute({
  operationId: 'replayWebhook',
  method: 'post',
  path: '/api/v1/webhooks/:id/replay',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Deliver again every change after a feed position (event ids repeat: drop the ones you applied)',
  params: WebhookIdParams,
  body: REPLAY_BODY,
  consumer: 'required',
  database: true,
  responses: {
    ...subscriptionAnswer('Delivery resumes after position'),
    '400': invalid('position is missing, not valid, or ahead of the feed'),
    '415': notJson,
  },
  handler:
    ({ db }) =>
    async (ctx, { params: { id }, body }) => {
      const positions = await feedPositions(db);
      const result = await replayFrom(db, ctx.state.consumer!.id, id, positions.seq(body.position));
      if (result === undefined) throw webhookNotFound();
      if (typeof result === 'string') throw badRequest(MESSAGES.positionAhead);
      ctx.body = { data: toWebhook(positions, result) };
    },
});

import { enableSubscription } from '../../../db/webhooks/subscriptions';
import { defineRoute } from '../../http/route';
import { webhookAnswer } from '../view';
import { OWN_SUBSCRIPTION, subscriptionAnswer } from './answers';

export const enableWebhookRoute = defineRoute({
  operationId: 'enableWebhook',
  method: 'post',
  path: '/api/v1/webhooks/:id/enable',
  summary: 'Deliver again after the subscription was disabled, starting with the event it stopped at',
  ...OWN_SUBSCRIPTION,
  responses: subscriptionAnswer('Active again'),
  handler: ({ db }) => async (ctx, { params: { id } }) => {
    ctx.body = await webhookAnswer(db, await enableSubscription(db, ctx.state.consumer!.id, id));
  },
});

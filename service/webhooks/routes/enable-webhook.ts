import { enableSubscription } from '../../../db/webhooks/subscriptions';
import { defineRoute } from '../../http/route';
import { answerSubscription, OWN_SUBSCRIPTION, subscriptionAnswer } from './answers';

export const enableWebhookRoute = defineRoute({
  operationId: 'enableWebhook',
  method: 'post',
  path: '/api/v1/webhooks/:id/enable',
  summary: 'Deliver again after the subscription was disabled, starting with the event it stopped at',
  ...OWN_SUBSCRIPTION,
  responses: subscriptionAnswer('Active again'),
  handler: answerSubscription(enableSubscription),
});

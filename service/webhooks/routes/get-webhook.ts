import { findSubscription } from '../../../db/webhooks/subscriptions';
import { defineRoute } from '../../http/route';
import { answerSubscription, OWN_SUBSCRIPTION, subscriptionAnswer } from './answers';

export const getWebhookRoute = defineRoute({
  operationId: 'getWebhook',
  method: 'get',
  path: '/api/v1/webhooks/:id',
  summary: 'One subscription: its status, position, and why it is failing or disabled',
  ...OWN_SUBSCRIPTION,
  responses: subscriptionAnswer('The subscription'),
  handler: answerSubscription(findSubscription),
});

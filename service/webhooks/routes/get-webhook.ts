import { signingKey } from '../../../db/signing-key';
import { findSubscription } from '../../../db/webhooks/subscriptions';
import { webhookNotFound } from '../../errors';
import { defineRoute } from '../../http/route';
import { WEBHOOK_EXAMPLE, WebhookEnvelope, WebhookIdParams } from '../contract';
import { toWebhook } from '../view';
import { notFound } from './answers';

export const getWebhookRoute = defineRoute({
  operationId: 'getWebhook',
  method: 'get',
  path: '/api/v1/webhooks/:id',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'One subscription: its status, position, and why it is failing or disabled',
  params: WebhookIdParams,
  consumer: 'required',
  database: true,
  responses: { '200': { description: 'The subscription', body: WebhookEnvelope, example: { data: WEBHOOK_EXAMPLE } }, '404': notFound },
  handler: ({ db }) => async (ctx, { params: { id } }) => {
    const row = await findSubscription(db, ctx.state.consumer!.id, id);
    if (!row) throw webhookNotFound();
    ctx.body = { data: toWebhook(await signingKey(db), row) };
  },
});

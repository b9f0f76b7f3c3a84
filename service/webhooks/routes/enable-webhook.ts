import { signingKey } from '../../../db/signing-key';
import { enableSubscription } from '../../../db/webhooks/subscriptions';
import { webhookNotFound } from '../../errors';
import { defineRoute } from '../../http/route';
import { WEBHOOK_EXAMPLE, WebhookEnvelope, WebhookIdParams } from '../contract';
import { toWebhook } from '../view';
import { notFound } from './answers';

export const enableWebhookRoute = defineRoute({
  operationId: 'enableWebhook',
  method: 'post',
  path: '/api/v1/webhooks/:id/enable',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Deliver again after the subscription was disabled, starting with the event it stopped at',
  params: WebhookIdParams,
  consumer: 'required',
  database: true,
  responses: { '200': { description: 'Active again', body: WebhookEnvelope, example: { data: WEBHOOK_EXAMPLE } }, '404': notFound },
  handler: ({ db }) => async (ctx, { params: { id } }) => {
    const row = await enableSubscription(db, ctx.state.consumer!.id, id);
    if (!row) throw webhookNotFound();
    ctx.body = { data: toWebhook(await signingKey(db), row) };
  },
});

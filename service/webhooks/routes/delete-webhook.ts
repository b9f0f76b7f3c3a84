import { deleteSubscription } from '../../../db/webhooks/subscriptions';
import { webhookNotFound } from '../../errors';
import { defineRoute } from '../../http/route';
import { notFound, OWN_SUBSCRIPTION } from './answers';

export const deleteWebhookRoute = defineRoute({
  operationId: 'deleteWebhook',
  method: 'delete',
  path: '/api/v1/webhooks/:id',
  summary: 'Unsubscribe: no more deliveries',
  ...OWN_SUBSCRIPTION,
  responses: { '204': { description: 'Deleted' }, '404': notFound },
  handler:
    ({ db }) =>
    async (ctx, { params: { id } }) => {
      if (!(await deleteSubscription(db, ctx.state.consumer!.id, id))) throw webhookNotFound();
      ctx.status = 204;
    },
});

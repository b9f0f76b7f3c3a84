import { listAttempts } from '../../../db/webhooks/attempts';
import { webhookNotFound } from '../../errors';
import { defineRoute } from '../../http/route';
import { ATTEMPT_EXAMPLES, AttemptList } from '../contract';
import { feedPositions, toAttempt } from '../route-support';
import { notFound, OWN_SUBSCRIPTION } from './answers';

export const listAttemptsRoute = defineRoute({
  operationId: 'listWebhookAttempts',
  method: 'get',
  path: '/api/v1/webhooks/:id/attempts',
  summary:
    "The last 100 delivery attempts, newest first: each event, when, your receiver's status or why it failed, and how long it took",
  description: "Nothing of your receiver's answer body is kept. Test events are listed too, with a null position.",
  ...OWN_SUBSCRIPTION,
  responses: {
    '200': { description: 'The attempts', body: AttemptList, example: { data: ATTEMPT_EXAMPLES } },
    '404': notFound,
  },
  handler:
    ({ db }) =>
    async (ctx, { params: { id } }) => {
      const attempts = await listAttempts(db, ctx.state.consumer!.id, id);
      if (!attempts) throw webhookNotFound();
      const positions = await feedPositions(db);
      ctx.body = { data: attempts.map((attempt) => toAttempt(positions, attempt)) };
    },
});

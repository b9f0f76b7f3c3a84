import { performance } from 'node:perf_hooks';
import { recordAttempts } from '../../../db/webhooks/attempts';
import { testTarget } from '../../../db/webhooks/subscriptions';
import { uuidv7 } from '../../../domain/uuid';
import { badRequest, MESSAGES, secretUnopenable, webhookNotFound } from '../../errors';
import { RETRY_HEADERS } from '../../headers';
import { errorResponse } from '../../http/responses';
import { defineRoute, type RouteDependencies } from '../../http/route';
import { TEST_EVENT_EXAMPLE, TEST_EVENT_TYPE, TestOutcome, WebhookIdParams } from '../contract';
import { postEvent } from '../post';
import { decryptSecret, SecretUnopenable, type Keyring } from '../secrets';
import { spoken, type WebhookRouteSettings } from '../settings';
import { signer } from '../signing';
import { secretsKeyring } from '../route-support';
import { notFound } from './answers';

/** The secrets that sign, opened; one no key of the ring opens is the 503 its owner can read, never a 500. */
function opened(keyring: Keyring, sealed: Buffer[]): string[] {
  try {
    return sealed.map((one) => decryptSecret(keyring, one));
  } catch (error) {
    if (error instanceof SecretUnopenable) throw secretUnopenable();
    throw error;
  }
}

export const testWebhookRoute = defineRoute({
  operationId: 'testWebhook',
  method: 'post',
  path: '/api/v1/webhooks/:id/test',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Send a signed webhook.test event now, outside the order, and see what your receiver answered',
  description: ({ webhooks }: WebhookRouteSettings) =>
    `The event (${JSON.stringify(TEST_EVENT_EXAMPLE)}) is signed like every delivery, with every secret still valid, and waits at most ${spoken(webhooks.timeoutMs)} for your answer. ` +
    'It has no position and no sequence, moves nothing, and is listed among the attempts.',
  params: WebhookIdParams,
  consumer: 'required',
  // Served without a database turn: it waits on the partner's receiver, up to the delivery timeout.
  database: false,
  responses: {
    '200': {
      description: 'What your receiver answered (delivered is false for anything but a 2xx)',
      body: TestOutcome,
      example: {
        data: { eventId: TEST_EVENT_EXAMPLE.id, delivered: false, status: 500, error: 'HTTP 500', latencyMs: 35 },
      },
    },
    '400': errorResponse('The subscription is disabled: enable it first', MESSAGES.testDisabled),
    '404': notFound,
    '503': errorResponse(
      "The server cannot open the subscription's signing secret (an operator's sealing key is missing; deliveries wait, none is lost), or the database is unreachable or the service saturated: nothing was sent; retry after Retry-After seconds",
      MESSAGES.secretUnopenable,
      RETRY_HEADERS,
    ),
  },
  handler:
    ({ db, settings: { webhooks } }: RouteDependencies<WebhookRouteSettings>) =>
    async (ctx, { params: { id } }) => {
      const keyring = secretsKeyring(webhooks);
      const target = await testTarget(db, ctx.state.consumer!.id, id);
      if (!target) throw webhookNotFound();
      if (target.status === 'disabled') throw badRequest(MESSAGES.testDisabled);
      const eventId = `evt_test_${uuidv7()}`;
      // Timed by the database's clock, as every delivery is: one clock for all signatures.
      const body = JSON.stringify({
        id: eventId,
        type: TEST_EVENT_TYPE,
        timestamp: target.now.toISOString(),
        data: { subscriptionId: id },
      });
      const headers = signer(opened(keyring, target.secrets))(eventId, target.now, body);
      const started = performance.now();
      const outcome = await postEvent(target.url, headers, body, {
        policy: webhooks.policy,
        timeoutMs: webhooks.timeoutMs,
      });
      const latencyMs = Math.round(performance.now() - started);
      const attempt = { status: outcome.status ?? null, error: outcome.ok ? null : outcome.error, latencyMs };
      await recordAttempts(db, [{ subscriptionId: id, eventId, position: null, ...attempt }]);
      ctx.body = { data: { eventId, delivered: outcome.ok, ...attempt } };
    },
});

import { createSubscription, storedEventTypes } from '../../../db/webhooks/subscriptions';
import { badRequest, MESSAGES, webhookLimit, webhookLimitMessage } from '../../errors';
import { CREATED_HEADERS, type HeaderValues } from '../../headers';
import { errorResponse } from '../../http/responses';
import { defineRoute, type RouteDependencies } from '../../http/route';
import { CREATE_WEBHOOK_BODY, CreatedWebhook, SECRET_EXAMPLE, WEBHOOK_EXAMPLE } from '../contract';
import { encryptSecret, newSecret } from '../secrets';
import type { WebhookRouteSettings } from '../settings';
import { checkedUrl, feedPositions, secretsKeyring, toWebhook } from '../route-support';
import { invalid, notJson } from './answers';

export const createWebhookRoute = defineRoute({
  operationId: 'createWebhook',
  method: 'post',
  path: '/api/v1/webhooks',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: ({ webhooks }: WebhookRouteSettings) =>
    `Subscribe a URL to job changes (at most ${webhooks.subscriptionLimit} per key); the secret is shown in this answer only`,
  description:
    "Events are the change feed's entries (job.updated, job.removed), POSTed in feed order with Standard Webhooks headers. " +
    "Without position, delivery starts at the feed's head now; with the nextSince your full sync reached, nothing between is missed.",
  body: CREATE_WEBHOOK_BODY,
  consumer: 'required',
  database: true,
  responses: {
    '201': {
      description: 'Subscribed',
      body: CreatedWebhook,
      example: { data: { ...WEBHOOK_EXAMPLE, secret: SECRET_EXAMPLE } },
      headers: CREATED_HEADERS,
    },
    '400': invalid(
      'A field is missing or wrong (an unknown event type), the url is not https or does not resolve only to public addresses, or position is not valid',
    ),
    '409': {
      ...errorResponse('', ''),
      description: ({ webhooks }: WebhookRouteSettings) =>
        `The key already holds ${webhooks.subscriptionLimit} subscriptions`,
      example: ({ webhooks }: WebhookRouteSettings) => ({ error: webhookLimitMessage(webhooks.subscriptionLimit) }),
    },
    '413': errorResponse(
      'Body over 16 KB ("Request size limit exceeded" from the gateway)',
      'Request size limit exceeded',
    ),
    '415': notJson,
  },
  handler:
    ({ db, settings: { webhooks } }: RouteDependencies<WebhookRouteSettings>) =>
    async (ctx, { body }) => {
      const keyring = secretsKeyring(webhooks);
      await checkedUrl(body.url, webhooks.policy);
      const positions = await feedPositions(db);
      const position = body.position === undefined ? undefined : positions.seq(body.position);
      const secret = newSecret();
      const consumer = ctx.state.consumer!;
      const created = await createSubscription(
        db,
        {
          consumerId: consumer.id,
          consumerName: consumer.username ?? null,
          url: body.url,
          description: body.description ?? null,
          eventTypes: storedEventTypes(body.eventTypes ?? null),
          secret: encryptSecret(keyring, secret),
          position,
        },
        webhooks.subscriptionLimit,
      );
      if (created === 'limit') throw webhookLimit(webhooks.subscriptionLimit);
      if (created === 'ahead') throw badRequest(MESSAGES.positionAhead);
      ctx.status = 201;
      ctx.set({ Location: `/api/v1/webhooks/${created.id}` } satisfies HeaderValues<typeof CREATED_HEADERS>);
      ctx.body = { data: { ...toWebhook(positions, created), secret } };
    },
});

import { rotateSecret } from '../../../db/webhooks/subscriptions';
import { webhookNotFound } from '../../errors';
import { defineRoute, type RouteDependencies } from '../../http/route';
import { ROTATION_OVERLAP_MS, RotatedSecret, SECRET_EXAMPLE, WEBHOOK_EXAMPLE, WebhookIdParams } from '../contract';
import { encryptSecret, newSecret } from '../secrets';
import type { WebhookRouteSettings } from '../settings';
import { sealingKey } from '../view';
import { notFound } from './answers';

export const rotateWebhookSecretRoute = defineRoute({
  operationId: 'rotateWebhookSecret',
  method: 'post',
  path: '/api/v1/webhooks/:id/rotate-secret',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'A new secret, shown in this answer only; for 24 hours deliveries carry signatures of both',
  params: WebhookIdParams,
  consumer: 'required',
  database: true,
  responses: {
    '200': { description: 'The new secret', body: RotatedSecret, example: { data: { id: WEBHOOK_EXAMPLE.id, secret: SECRET_EXAMPLE, previousSecretExpiresAt: '2026-11-27T09:00:00.000Z' } } },
    '404': notFound,
  },
  handler: ({ db, settings: { webhooks } }: RouteDependencies<WebhookRouteSettings>) => async (ctx, { params: { id } }) => {
    const secret = newSecret();
    const at = Date.now();
    if (!(await rotateSecret(db, ctx.state.consumer!.id, id, encryptSecret(sealingKey(webhooks), secret), ROTATION_OVERLAP_MS))) throw webhookNotFound();
    ctx.body = { data: { id, secret, previousSecretExpiresAt: new Date(at + ROTATION_OVERLAP_MS).toISOString() } };
  },
});

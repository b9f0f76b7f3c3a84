import { rotateSecret } from '../../../db/webhooks/subscriptions';
import { rotationRefused, rotationRefusedMessage, webhookNotFound } from '../../errors';
import { errorResponse } from '../../http/responses';
import { defineRoute, type RouteDependencies } from '../../http/route';
import {
  ROTATE_BODY,
  ROTATION_OVERLAP_MS,
  RotatedSecret,
  SECRET_EXAMPLE,
  WEBHOOK_EXAMPLE,
  WebhookIdParams,
} from '../contract';
import { encryptSecret, newSecret } from '../secrets';
import { spoken, type WebhookRouteSettings } from '../settings';
import { secretsKeyring } from '../route-support';
import { invalid, notFound, notJson } from './answers';

export const rotateWebhookSecretRoute = defineRoute({
  operationId: 'rotateWebhookSecret',
  method: 'post',
  path: '/api/v1/webhooks/:id/rotate-secret',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: `A new secret, shown in this answer only; the replaced ones go on signing for ${spoken(ROTATION_OVERLAP_MS)} unless expirePrevious`,
  description:
    `Deliveries carry a signature of the current secret and of up to two it replaced within the last ${spoken(ROTATION_OVERLAP_MS)}. ` +
    'A rotation that would drop one of those is refused (409, saying when it can be done); {"expirePrevious": true} ends every replaced secret now, for a leaked one.',
  params: WebhookIdParams,
  body: ROTATE_BODY,
  consumer: 'required',
  database: true,
  responses: {
    '200': {
      description: 'The new secret',
      body: RotatedSecret,
      example: {
        data: {
          id: WEBHOOK_EXAMPLE.id,
          secret: SECRET_EXAMPLE,
          previousSecretExpiresAt: '2026-11-27T09:00:00.000Z',
          olderSecretExpiresAt: null,
        },
      },
    },
    '400': invalid('expirePrevious is not a boolean, or another field was sent'),
    '404': notFound,
    '409': errorResponse(
      'Two replaced secrets still sign: the message says until when',
      rotationRefusedMessage('2026-11-27T09:00:00.000Z'),
    ),
    '415': notJson,
  },
  handler:
    ({ db, settings: { webhooks } }: RouteDependencies<WebhookRouteSettings>) =>
    async (ctx, { params: { id }, body }) => {
      const secret = newSecret();
      const rotation = await rotateSecret(db, ctx.state.consumer!.id, id, {
        secret: encryptSecret(secretsKeyring(webhooks), secret),
        overlapMs: ROTATION_OVERLAP_MS,
        expirePrevious: body.expirePrevious === true,
      });
      if (!rotation) throw webhookNotFound();
      if ('refusedUntil' in rotation) throw rotationRefused(rotation.refusedUntil.toISOString());
      ctx.body = {
        data: {
          id,
          secret,
          previousSecretExpiresAt: rotation.previousExpiresAt.toISOString(),
          olderSecretExpiresAt: rotation.olderExpiresAt?.toISOString() ?? null,
        },
      };
    },
});

import type { RouterMiddleware } from '@koa/router';
import { z } from 'zod';
import { requireConsumer, requireJson } from '../../jobs/http/create-job';
import type { Route } from '../../jobs/http/route-spec';
import { jsonBody } from '../../middleware/json-body';
import { errorResponse, ValidationErrorBody } from '../../jobs/contract/responses';
import { createWebhook, deleteWebhook, enableWebhook, getWebhook, listWebhooks, replayWebhook, rotateWebhookSecret } from '../api';
import {
  CreatedWebhook,
  CreateWebhookBody,
  ReplayBody,
  RotatedSecret,
  SECRET_EXAMPLE,
  SUBSCRIPTION_LIMIT,
  WEBHOOK_EXAMPLE,
  WebhookEnvelope,
  WebhookList,
} from '../contract';

/**
 * The webhook subscription routes: each a partner's own (another consumer's id is a 404), behind
 * the gateway's jobs:read like every read, since a subscription shows what the key may read.
 */
const WebhookIdParams = z.object({ id: z.string().meta({ description: 'The subscription\'s id', examples: [WEBHOOK_EXAMPLE.id] }) });
const notFound = errorResponse('No subscription of yours has this id', 'Webhook not found');
const invalid = (description: string) => ({
  description,
  body: ValidationErrorBody,
  example: { error: 'Validation failed', details: [{ field: 'url', message: 'url is required' }] },
});

const consumerOf = (ctx: Parameters<RouterMiddleware>[0]) => ctx.state.consumer!;
const idOf = (ctx: Parameters<RouterMiddleware>[0]) => ctx.params.id ?? '';

export const createWebhookRoute: Route = {
  operationId: 'createWebhook',
  method: 'post',
  path: '/api/v1/webhooks',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: `Subscribe a URL to job changes (at most ${SUBSCRIPTION_LIMIT} per key); the secret is shown in this answer only`,
  description:
    'Events are the change feed\'s entries (job.updated, job.removed), POSTed in feed order with Standard Webhooks headers. ' +
    'Without position, delivery starts at the feed\'s head now; with the nextSince your full sync reached, nothing between is missed.',
  body: { schema: CreateWebhookBody, description: 'application/json: url (https, public), description, position', example: { url: WEBHOOK_EXAMPLE.url, description: 'Job board sync' } },
  database: true,
  responses: {
    '201': { description: 'Subscribed', body: CreatedWebhook, example: { data: { ...WEBHOOK_EXAMPLE, secret: SECRET_EXAMPLE } }, headers: { Location: '/api/v1/webhooks/{id}' } },
    '400': invalid('A field is missing or wrong, the url is not https or does not reach a public address (the message says which), or position is not valid'),
    '409': errorResponse(`The key already holds ${SUBSCRIPTION_LIMIT} subscriptions`, `A key may hold at most ${SUBSCRIPTION_LIMIT} webhook subscriptions: delete one first`),
    '415': errorResponse('Content-Type is not application/json', 'Content-Type must be application/json'),
  },
  handler: (db) => [
    requireConsumer,
    requireJson,
    jsonBody(),
    async (ctx) => {
      const created = await createWebhook(db, ctx.webhooks, consumerOf(ctx), ctx.request.body);
      ctx.status = 201;
      ctx.set('Location', `/api/v1/webhooks/${created.data.id}`);
      ctx.body = created;
    },
  ],
};

export const listWebhooksRoute: Route = {
  operationId: 'listWebhooks',
  method: 'get',
  path: '/api/v1/webhooks',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Your webhook subscriptions, oldest first',
  database: true,
  responses: { '200': { description: 'Your subscriptions', body: WebhookList, example: { data: [WEBHOOK_EXAMPLE] } } },
  handler: (db) => [
    requireConsumer,
    async (ctx) => {
      ctx.body = await listWebhooks(db, consumerOf(ctx).id);
    },
  ],
};

export const getWebhookRoute: Route = {
  operationId: 'getWebhook',
  method: 'get',
  path: '/api/v1/webhooks/:id',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'One subscription: its status, position, and why it is failing or disabled',
  params: WebhookIdParams,
  database: true,
  responses: { '200': { description: 'The subscription', body: WebhookEnvelope, example: { data: WEBHOOK_EXAMPLE } }, '404': notFound },
  handler: (db) => [
    requireConsumer,
    async (ctx) => {
      ctx.body = await getWebhook(db, consumerOf(ctx).id, idOf(ctx));
    },
  ],
};

export const deleteWebhookRoute: Route = {
  operationId: 'deleteWebhook',
  method: 'delete',
  path: '/api/v1/webhooks/:id',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Unsubscribe: no more deliveries',
  params: WebhookIdParams,
  database: true,
  responses: { '204': { description: 'Deleted' }, '404': notFound },
  handler: (db) => [
    requireConsumer,
    async (ctx) => {
      await deleteWebhook(db, consumerOf(ctx).id, idOf(ctx));
      ctx.status = 204;
    },
  ],
};

export const rotateWebhookSecretRoute: Route = {
  operationId: 'rotateWebhookSecret',
  method: 'post',
  path: '/api/v1/webhooks/:id/rotate-secret',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'A new secret, shown in this answer only; for 24 hours deliveries carry signatures of both',
  params: WebhookIdParams,
  database: true,
  responses: {
    '200': { description: 'The new secret', body: RotatedSecret, example: { data: { id: WEBHOOK_EXAMPLE.id, secret: SECRET_EXAMPLE, previousSecretExpiresAt: '2026-11-27T09:00:00.000Z' } } },
    '404': notFound,
  },
  handler: (db) => [
    requireConsumer,
    async (ctx) => {
      ctx.body = await rotateWebhookSecret(db, ctx.webhooks, consumerOf(ctx).id, idOf(ctx));
    },
  ],
};

export const replayWebhookRoute: Route = {
  operationId: 'replayWebhook',
  method: 'post',
  path: '/api/v1/webhooks/:id/replay',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Deliver again every change after a feed position (event ids repeat: drop the ones you applied)',
  params: WebhookIdParams,
  body: { schema: ReplayBody, description: 'application/json: position', example: { position: WEBHOOK_EXAMPLE.position } },
  database: true,
  responses: {
    '200': { description: 'Delivery resumes after position', body: WebhookEnvelope, example: { data: WEBHOOK_EXAMPLE } },
    '400': invalid('position is missing, not valid, or ahead of the feed'),
    '404': notFound,
    '415': errorResponse('Content-Type is not application/json', 'Content-Type must be application/json'),
  },
  handler: (db) => [
    requireConsumer,
    requireJson,
    jsonBody(),
    async (ctx) => {
      ctx.body = await replayWebhook(db, consumerOf(ctx).id, idOf(ctx), ctx.request.body);
    },
  ],
};

export const enableWebhookRoute: Route = {
  operationId: 'enableWebhook',
  method: 'post',
  path: '/api/v1/webhooks/:id/enable',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Deliver again after the subscription was disabled, starting with the event it stopped at',
  params: WebhookIdParams,
  database: true,
  responses: { '200': { description: 'Active again', body: WebhookEnvelope, example: { data: WEBHOOK_EXAMPLE } }, '404': notFound },
  handler: (db) => [
    requireConsumer,
    async (ctx) => {
      ctx.body = await enableWebhook(db, consumerOf(ctx).id, idOf(ctx));
    },
  ],
};

/** In matching order: the fixed sub-paths before nothing ambiguous (each is its own pattern). */
export const WEBHOOK_ROUTES: readonly Route[] = [
  listWebhooksRoute,
  createWebhookRoute,
  getWebhookRoute,
  deleteWebhookRoute,
  rotateWebhookSecretRoute,
  replayWebhookRoute,
  enableWebhookRoute,
];

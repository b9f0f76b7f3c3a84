import { MESSAGES } from '../../errors';
import { errorResponse, ValidationErrorBody } from '../../jobs/contract/responses';
import { defineRoute, type Route } from '../../jobs/http/route';
import { createWebhook, deleteWebhook, enableWebhook, getWebhook, listWebhooks, replayWebhook, rotateWebhookSecret } from '../api';
import {
  CREATE_WEBHOOK_BODY,
  CreatedWebhook,
  REPLAY_BODY,
  RotatedSecret,
  SECRET_EXAMPLE,
  SUBSCRIPTION_LIMIT,
  WEBHOOK_EXAMPLE,
  WebhookEnvelope,
  WebhookIdParams,
  WebhookList,
} from '../contract';

// The webhook subscription routes: a partner's own, behind jobs:read (a subscription shows nothing the key could not read).
const notFound = errorResponse('No subscription of yours has this id', MESSAGES.webhookNotFound);
const invalid = (description: string) => ({
  description,
  body: ValidationErrorBody,
  example: { error: MESSAGES.validationFailed, details: [{ field: 'url', message: 'url is required' }] },
});
const notJson = errorResponse('Content-Type is not application/json', MESSAGES.notJson);

export const listWebhooksRoute = defineRoute({
  operationId: 'listWebhooks',
  method: 'get',
  path: '/api/v1/webhooks',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Your webhook subscriptions, oldest first',
  consumer: 'required',
  database: true,
  responses: { '200': { description: 'Your subscriptions', body: WebhookList, example: { data: [WEBHOOK_EXAMPLE] } } },
  handler: (db) => async (ctx) => {
    ctx.body = await listWebhooks(db, ctx.state.consumer!.id);
  },
});

export const createWebhookRoute = defineRoute({
  operationId: 'createWebhook',
  method: 'post',
  path: '/api/v1/webhooks',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: `Subscribe a URL to job changes (at most ${SUBSCRIPTION_LIMIT} per key); the secret is shown in this answer only`,
  description:
    'Events are the change feed\'s entries (job.updated, job.removed), POSTed in feed order with Standard Webhooks headers. ' +
    'Without position, delivery starts at the feed\'s head now; with the nextSince your full sync reached, nothing between is missed.',
  body: CREATE_WEBHOOK_BODY,
  consumer: 'required',
  database: true,
  responses: {
    '201': { description: 'Subscribed', body: CreatedWebhook, example: { data: { ...WEBHOOK_EXAMPLE, secret: SECRET_EXAMPLE } }, headers: { Location: '/api/v1/webhooks/{id}' } },
    '400': invalid('A field is missing or wrong, the url is not https or does not reach a public address (the message says which), or position is not valid'),
    '409': errorResponse(`The key already holds ${SUBSCRIPTION_LIMIT} subscriptions`, MESSAGES.webhookLimit),
    '413': errorResponse('Body over 16 KB ("Request size limit exceeded" from the gateway)', 'Request size limit exceeded'),
    '415': notJson,
  },
  handler: (db) => async (ctx, { body }) => {
    const created = await createWebhook(db, ctx.webhooks, ctx.state.consumer!, body);
    ctx.status = 201;
    ctx.set('Location', `/api/v1/webhooks/${created.data.id}`);
    ctx.body = created;
  },
});

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
  handler: (db) => async (ctx, { params: { id } }) => {
    ctx.body = await getWebhook(db, ctx.state.consumer!.id, id);
  },
});

export const deleteWebhookRoute = defineRoute({
  operationId: 'deleteWebhook',
  method: 'delete',
  path: '/api/v1/webhooks/:id',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Unsubscribe: no more deliveries',
  params: WebhookIdParams,
  consumer: 'required',
  database: true,
  responses: { '204': { description: 'Deleted' }, '404': notFound },
  handler: (db) => async (ctx, { params: { id } }) => {
    await deleteWebhook(db, ctx.state.consumer!.id, id);
    ctx.status = 204;
  },
});

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
  handler: (db) => async (ctx, { params: { id } }) => {
    ctx.body = await rotateWebhookSecret(db, ctx.webhooks, ctx.state.consumer!.id, id);
  },
});

export const replayWebhookRoute = defineRoute({
  operationId: 'replayWebhook',
  method: 'post',
  path: '/api/v1/webhooks/:id/replay',
  scope: 'jobs:read',
  tag: 'webhooks',
  summary: 'Deliver again every change after a feed position (event ids repeat: drop the ones you applied)',
  params: WebhookIdParams,
  body: REPLAY_BODY,
  consumer: 'required',
  database: true,
  responses: {
    '200': { description: 'Delivery resumes after position', body: WebhookEnvelope, example: { data: WEBHOOK_EXAMPLE } },
    '400': invalid('position is missing, not valid, or ahead of the feed'),
    '404': notFound,
    '415': notJson,
  },
  handler: (db) => async (ctx, { params: { id }, body }) => {
    ctx.body = await replayWebhook(db, ctx.state.consumer!.id, id, body.position);
  },
});

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
  handler: (db) => async (ctx, { params: { id } }) => {
    ctx.body = await enableWebhook(db, ctx.state.consumer!.id, id);
  },
});

export const WEBHOOK_ROUTES: readonly Route[] = [
  listWebhooksRoute,
  createWebhookRoute,
  getWebhookRoute,
  deleteWebhookRoute,
  rotateWebhookSecretRoute,
  replayWebhookRoute,
  enableWebhookRoute,
];

import { z } from 'zod';
import { defineRoute, type RouteDependencies } from '../http/route';
import { createJobRoute } from '../jobs/routes/create-job';
import { getJobRoute } from '../jobs/routes/get-job';
import { jobChangesRoute } from '../jobs/routes/job-changes';
import { listJobsRoute } from '../jobs/routes/list-jobs';
import { mirrorBucketRoute } from '../jobs/routes/mirror-bucket';
import { mirrorDigestRoute } from '../jobs/routes/mirror-digest';
import { createWebhookRoute } from '../webhooks/routes/create-webhook';
import { deleteWebhookRoute } from '../webhooks/routes/delete-webhook';
import { enableWebhookRoute } from '../webhooks/routes/enable-webhook';
import { getWebhookRoute } from '../webhooks/routes/get-webhook';
import { listAttemptsRoute } from '../webhooks/routes/list-attempts';
import { listWebhooksRoute } from '../webhooks/routes/list-webhooks';
import { replayWebhookRoute } from '../webhooks/routes/replay-webhook';
import { rotateWebhookSecretRoute } from '../webhooks/routes/rotate-secret';
import { testWebhookRoute } from '../webhooks/routes/test-webhook';
import { updateWebhookRoute } from '../webhooks/routes/update-webhook';
import { openApiDocument } from './openapi';
import type { ApiRoute, ApiSettings } from './settings';

const documents = new WeakMap<ApiSettings, ReturnType<typeof openApiDocument>>();

/** The OpenAPI document of ROUTES under `settings`, built once per settings. */
export function apiDocument(settings: ApiSettings): ReturnType<typeof openApiDocument> {
  let document = documents.get(settings);
  if (!document) documents.set(settings, (document = openApiDocument(ROUTES, settings)));
  return document;
}

/** The contract itself, behind the gateway's jobs:read like every read. */
const openApiRoute = defineRoute({
  operationId: 'getOpenApiDocument',
  method: 'get',
  path: '/api/v1/openapi.json',
  scope: 'jobs:read',
  tag: 'meta',
  summary: 'This document',
  conditional: true,
  database: false,
  responses: {
    '200': {
      description: 'The OpenAPI document',
      body: z.looseObject({ openapi: z.string() }),
      example: {
        openapi: '3.1.1',
        info: { title: 'Job Listings API', version: '1.0.0' },
        paths: { '/api/v1/jobs': {} },
      },
    },
  },
  handler:
    ({ settings }: RouteDependencies<ApiSettings>) =>
    (ctx) => {
      ctx.body = apiDocument(settings);
    },
});

/** Every route of the API, in matching order ('/changes' before '/:id', which would take it): the one list of paths and scopes. */
export const ROUTES: readonly ApiRoute[] = [
  listJobsRoute,
  jobChangesRoute,
  mirrorDigestRoute,
  mirrorBucketRoute,
  getJobRoute,
  createJobRoute,
  openApiRoute,
  listWebhooksRoute,
  createWebhookRoute,
  getWebhookRoute,
  updateWebhookRoute,
  deleteWebhookRoute,
  rotateWebhookSecretRoute,
  replayWebhookRoute,
  enableWebhookRoute,
  listAttemptsRoute,
  testWebhookRoute,
];

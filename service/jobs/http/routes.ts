import { z } from 'zod';
import { createJobRoute } from './create-job';
import { getJobRoute } from './get-job';
import { jobChangesRoute } from './job-changes';
import { listJobsRoute } from './list-jobs';
import { openApiDocument } from './openapi';
import { defineRoute, type Route } from './route';
import { WEBHOOK_ROUTES } from '../../webhooks/http/routes';

let document: ReturnType<typeof openApiDocument> | undefined;

/** The OpenAPI document of ROUTES, built once per process (scripts/openapi.ts writes it to docs/). */
export const apiDocument = () => (document ??= openApiDocument(ROUTES));

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
      example: { openapi: '3.1.1', info: { title: 'Job Listings API', version: '1.0.0' }, paths: { '/api/v1/jobs': {} } },
    },
  },
  handler: () => (ctx) => {
    ctx.body = apiDocument();
  },
});

/** Every route of the API, in matching order ('/changes' before '/:id', which would take it): the one list of paths and scopes. */
export const ROUTES: readonly Route[] = [listJobsRoute, jobChangesRoute, getJobRoute, createJobRoute, openApiRoute, ...WEBHOOK_ROUTES];

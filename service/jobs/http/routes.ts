import { z } from 'zod';
import { createJobRoute } from './create-job';
import { getJobRoute } from './get-job';
import { jobChangesRoute } from './job-changes';
import { listJobsRoute } from './list-jobs';
import { openApiDocument } from './openapi';
import { defineRoute, type Route } from './route';
import { WEBHOOK_ROUTES } from '../../webhooks/http/routes';

const documents = new Map<string, ReturnType<typeof openApiDocument>>();

/** The OpenAPI document of ROUTES for a public address, built once (without one: what scripts/openapi.ts writes to docs/). */
export function apiDocument(publicUrl?: string): ReturnType<typeof openApiDocument> {
  let document = documents.get(publicUrl ?? '');
  if (!document) documents.set(publicUrl ?? '', (document = openApiDocument(ROUTES, { publicUrl })));
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
      example: { openapi: '3.1.1', info: { title: 'Job Listings API', version: '1.0.0' }, paths: { '/api/v1/jobs': {} } },
    },
  },
  handler: () => (ctx) => {
    ctx.body = apiDocument(ctx.publicUrl);
  },
});

/** Every route of the API, in matching order ('/changes' before '/:id', which would take it): the one list of paths and scopes. */
export const ROUTES: readonly Route[] = [listJobsRoute, jobChangesRoute, getJobRoute, createJobRoute, openApiRoute, ...WEBHOOK_ROUTES];

import { hash } from 'node:crypto';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { Database } from '../../../db/client';
import { createJobRoute } from './create-job';
import { getJobRoute } from './get-job';
import { jobChangesRoute } from './job-changes';
import { listJobsRoute } from './list-jobs';
import { openApiDocument } from './openapi';
import type { Route } from './route-spec';
import { WEBHOOK_ROUTES } from '../../webhooks/http/routes';

let document: ReturnType<typeof openApiDocument> | undefined;

/** The OpenAPI document of ROUTES, built once per process (scripts/openapi.ts writes it to docs/). */
export const apiDocument = () => (document ??= openApiDocument(ROUTES));

/** The contract itself, behind the gateway's jobs:read like every read. */
const openApiRoute: Route = {
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
};

/** Every route of the API, in matching order ('/changes' before '/:id', which would take it). */
export const ROUTES: readonly Route[] = [listJobsRoute, jobChangesRoute, getJobRoute, createJobRoute, openApiRoute, ...WEBHOOK_ROUTES];

/** The routes that do (or do not) read the database, as one Koa router; `db` is the database with its replicas, if any. */
export function apiRouter(db: Database, database: boolean): Router {
  const router = new Router();
  for (const route of ROUTES.filter((one) => one.database === database)) {
    const steps = [route.handler(db)].flat();
    router[route.method](route.path, ...(route.conditional ? [conditional, ...steps] : steps));
  }
  return router;
}

/**
 * Conditional GETs. The ETag is a SHA-256 of the exact JSON body sent, so it changes the moment
 * anything a reader can see changes (a field, a job joining or leaving the page, a total, the
 * next cursor or feed position) and never otherwise; a matching If-None-Match is answered 304
 * with no body. The query still runs: the saving is the body and the partner's processing, and
 * the tag can never be stale. `private`: a response depends on who asks (their drafts).
 */
export const conditional: Middleware = async (ctx, next) => {
  await next();
  // GET and HEAD only (the router sends nothing else here); errors keep their own bodies.
  if (ctx.status !== 200 || ctx.body === null || typeof ctx.body !== 'object') return;
  const text = JSON.stringify(ctx.body);
  ctx.body = text;
  ctx.type = 'application/json; charset=utf-8';
  const tag = `"${hash('sha256', text, 'base64url')}"`;
  ctx.set('ETag', tag);
  ctx.set('Cache-Control', 'private, no-cache');
  if (noneMatch(ctx.get('If-None-Match'), tag)) ctx.status = 304;
};

/**
 * If-None-Match as RFC 9110 13.1.2 evaluates it: `*`, or any listed tag equal to ours by weak
 * comparison (W/ ignored). Not Koa's ctx.fresh: it treats a request's `Cache-Control: no-cache`
 * as "never 304", and fetch() (browsers, Node) adds exactly that header to every conditional
 * request it is handed, so those partners would never see a 304.
 */
function noneMatch(header: string, tag: string): boolean {
  // Node has already trimmed the value's surrounding whitespace.
  if (header === '*') return true;
  const listed = header.match(/(?:W\/)?"[^"]*"/g);
  return listed !== null && listed.some((one) => one.replace(/^W\//, '') === tag);
}

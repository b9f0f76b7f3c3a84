import Router, { type RouterMiddleware } from '@koa/router';
import { z } from 'zod';
import type { Database } from '../../../db/client';
import { conditional } from './conditional';
import { createJobRoute } from './create-job';
import { getJobRoute } from './get-job';
import { jobChangesRoute } from './job-changes';
import { listJobsRoute } from './list-jobs';
import { openApiDocument } from './openapi';

/** A response a route declares: its body's schema (none for 304) and an example of it. */
export interface ResponseSpec {
  description: string;
  body?: z.ZodType;
  example?: unknown;
  /** Response headers, each with its description (and `integer` when it is a number). */
  headers?: Record<string, string | { description: string; type: 'integer' }>;
}

/** A request header a route reads. */
export interface HeaderSpec {
  description: string;
  pattern?: string;
}

/**
 * One route, declared once: what the router mounts and what the OpenAPI document describes
 * (openapi.ts) come from this object, so the two cannot differ.
 */
export interface Route {
  operationId: string;
  method: 'get' | 'post';
  /** Koa's form: `:id` for a path parameter. */
  path: string;
  /** The scope the gateway requires of the key (kong.yaml's job-scopes plugin). */
  scope: 'jobs:read' | 'jobs:write';
  tag: 'jobs' | 'meta';
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: Record<string, HeaderSpec>;
  body?: { schema: z.ZodType; description: string; example: unknown };
  /** Answers with an ETag and honours If-None-Match (conditional.ts). */
  conditional?: boolean;
  /** False for a route that reads no database: it is served before admission, without a turn. */
  database: boolean;
  /** This route's own answers; those of the gateway and the service's guards are added to every route. */
  responses: Record<string, ResponseSpec>;
  /** The route's own steps, the last one answering. */
  handler: (db: Database) => RouterMiddleware | RouterMiddleware[];
}

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
  responses: { '200': { description: 'The OpenAPI document', body: z.looseObject({ openapi: z.string() }) } },
  handler: () => (ctx) => {
    ctx.body = apiDocument();
  },
};

/** Every route of the API, in matching order ('/changes' before '/:id', which would take it). */
export const ROUTES: readonly Route[] = [listJobsRoute, jobChangesRoute, getJobRoute, createJobRoute, openApiRoute];

/** The routes that do (or do not) read the database, as one Koa router; `db` is the database with its replicas, if any. */
export function apiRouter(db: Database, database: boolean): Router {
  const router = new Router();
  for (const route of ROUTES.filter((one) => one.database === database)) {
    const steps = [route.handler(db)].flat();
    router[route.method](route.path, ...(route.conditional ? [conditional, ...steps] : steps));
  }
  return router;
}

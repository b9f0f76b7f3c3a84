import type { RouterMiddleware } from '@koa/router';
import type { z } from 'zod';
import type { Database } from '../../../db/client';

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
  method: 'get' | 'post' | 'delete';
  /** Koa's form: `:id` for a path parameter. */
  path: string;
  /** The scope the gateway requires of the key (kong.yaml's job-scopes plugin). */
  scope: 'jobs:read' | 'jobs:write';
  tag: 'jobs' | 'meta' | 'webhooks';
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: Record<string, HeaderSpec>;
  body?: { schema: z.ZodType; description: string; example: unknown };
  /** Answers with an ETag and honours If-None-Match (`conditional` in routes.ts). */
  conditional?: boolean;
  /** False for a route that reads no database: it is served before admission, without a turn. */
  database: boolean;
  /** This route's own answers; those of the gateway and the service's guards are added to every route. */
  responses: Record<string, ResponseSpec>;
  /** The route's own steps, the last one answering. */
  handler: (db: Database) => RouterMiddleware | RouterMiddleware[];
}

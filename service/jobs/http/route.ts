import type { Context } from 'koa';
import type { z } from 'zod';
import type { Database } from '../../../db/client';
import type { QueryString, RequestBody } from '../contract/input';

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

/** What the router hands a handler: the path, query and body as the route's schemas parsed them. */
export interface RouteInput<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
}

export type Handler<P = unknown, Q = unknown, B = unknown> = (ctx: Context, input: RouteInput<P, Q, B>) => Promise<void> | void;

/** One route, declared once: the router mounts it and applies its schemas. */
export interface Route<P extends z.ZodObject = z.ZodObject, Q extends z.ZodObject = z.ZodObject, B extends z.ZodObject = z.ZodObject> {
  operationId: string;
  method: 'get' | 'post' | 'delete';
  /** Koa's form: `:id` for a path parameter. */
  path: string;
  /** The scope the gateway requires of the key (kong.yaml's job-scopes plugin). */
  scope: 'jobs:read' | 'jobs:write';
  tag: 'jobs' | 'meta' | 'webhooks';
  summary: string;
  description?: string;
  /** Path parameters; a path they do not fit is a 404 with the schema's message. */
  params?: P;
  /** The query string; anything it refuses is a 400 naming the first problem. */
  query?: QueryString<Q>;
  headers?: Record<string, HeaderSpec>;
  /** A JSON object body; anything it refuses is a 400 with every problem. */
  body?: RequestBody<B>;
  /** Only a caller the gateway named may use it (a write records who wrote). */
  consumer?: 'required';
  /** Answers with an ETag and honours If-None-Match (conditional.ts). */
  conditional?: boolean;
  /** False for a route that reads no database: it is served before admission, without a turn. */
  database: boolean;
  /** This route's own answers; those of the gateway and the service's guards are added to every route. */
  responses: Record<string, ResponseSpec>;
  /** The answer, given the database (with its replicas, if any) once at mount. */
  handler: (db: Database) => Handler<z.output<P>, z.output<Q>, z.output<B>>;
}

/** A route with its handler's input typed by its own schemas. */
export const defineRoute = <P extends z.ZodObject = z.ZodObject, Q extends z.ZodObject = z.ZodObject, B extends z.ZodObject = z.ZodObject>(
  route: Route<P, Q, B>,
): Route => route as unknown as Route;

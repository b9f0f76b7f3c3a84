import type { Context } from 'koa';
import type { z } from 'zod';
import type { Database } from '../../db/client';
import type { HeaderDeclaration } from '../headers';
import type { QueryString, RequestBody } from './input';

/** A response a route declares: its body's schema (none for 304) and an example of it. */
export interface ResponseSpec<S = unknown> {
  description: Said<S>;
  body?: z.ZodType;
  /** A value, or one made from the settings (an error whose message states one). */
  example?: unknown;
  /** Response headers the route sends itself: declarations of headers.ts. */
  headers?: Record<string, HeaderDeclaration>;
}

/** A request header a route reads. */
export interface HeaderSpec {
  description: string;
  pattern?: string;
  maxLength?: number;
}

/** What the router hands a handler: the path, query and body as the route's schemas parsed them. */
export interface RouteInput<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
}

export type Handler<P = unknown, Q = unknown, B = unknown> = (
  ctx: Context,
  input: RouteInput<P, Q, B>,
) => Promise<void> | void;

/** What a route is given once, at mount: the database (with its replicas, if any) and the settings that shape its answers. */
export interface RouteDependencies<S = unknown> {
  db: Database;
  settings: S;
}

/** Words of the document that may state a setting: a string, or made from the settings. */
export type Said<S = unknown> = string | ((settings: S) => string);

/** The text of `said` under `settings`. */
export const say = <S>(said: Said<S>, settings: S): string => (typeof said === 'function' ? said(settings) : said);

/** One route, declared once: the router mounts it and applies its schemas. */
export interface Route<
  P extends z.ZodObject = z.ZodObject,
  Q extends z.ZodObject = z.ZodObject,
  B extends z.ZodObject = z.ZodObject,
  S = unknown,
> {
  operationId: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Koa's form: `:id` for a path parameter. */
  path: string;
  /** The scope the gateway requires of the key (kong.yaml's job-scopes plugin). */
  scope: 'jobs:read' | 'jobs:write';
  tag: 'jobs' | 'meta' | 'webhooks';
  summary: Said<S>;
  description?: Said<S>;
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
  /** False for a route served before admission, without a turn: it reads no database, or waits on something far slower than its few statements. */
  database: boolean;
  /** This route's own answers; those of the gateway and the service's guards are added to every route. */
  responses: Record<string, ResponseSpec<S>>;
  /** The answer, given the route's dependencies once at mount. */
  handler: (dependencies: RouteDependencies<S>) => Handler<z.output<P>, z.output<Q>, z.output<B>>;
}

/** A route with its handler's input typed by its own schemas. */
export const defineRoute = <
  P extends z.ZodObject = z.ZodObject,
  Q extends z.ZodObject = z.ZodObject,
  B extends z.ZodObject = z.ZodObject,
  S = unknown,
>(
  route: Route<P, Q, B, S>,
): Route<z.ZodObject, z.ZodObject, z.ZodObject, S> => route;

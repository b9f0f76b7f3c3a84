import { z } from 'zod';
import { MESSAGES } from '../errors';
import { Job, Salary, Tombstone } from '../../domain/job';
import { GUIDES, withFacts } from './guides';
import { ChangeList, JobEnvelope, JobList } from '../jobs/contract/responses';
import { ErrorBody, ScopeErrorBody, ValidationErrorBody } from '../http/responses';
import { say, type ResponseSpec, type Route } from '../http/route';
import { EVENT_EXAMPLE, JobRemovedEvent, JobUpdatedEvent, TEST_EVENT_EXAMPLE, TEST_EVENT_TYPE, Webhook, WebhookTestEvent } from '../webhooks/contract';
import { spoken } from '../webhooks/settings';
import type { ApiRoute, ApiSettings } from './settings';

/** The OpenAPI 3.1 document, generated from the route table (routes.ts). */

type JsonSchema = Record<string, unknown>;

// Named schemas become components; a route's schema that is (or holds) one of them gets a $ref.
const NAMED = { Job, Salary, Tombstone, JobList, JobEnvelope, ChangeList, Error: ErrorBody, ScopeError: ScopeErrorBody, ValidationError: ValidationErrorBody, Webhook, JobUpdatedEvent, JobRemovedEvent, WebhookTestEvent };
const components = z.registry<{ id: string }>();
for (const [id, schema] of Object.entries(NAMED)) components.add(schema, { id });
const idOf = new Map<z.ZodType, string>(Object.entries(NAMED).map(([id, schema]) => [schema as z.ZodType, id]));

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(components, { uri: (id) => `#/components/schemas/${id}` });
  // OpenAPI 3.1's base dialect is JSON Schema 2020-12 (no jsonSchemaDialect needed); components carry no $schema or $id.
  return Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema as JsonSchema]));
}

/** A JSON Schema without the dialect (OpenAPI 3.1's default, JSON Schema 2020-12, applies). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** A parameter's schema: the parsed value's when it is a plain one. */
function parameter(name: string, where: 'path' | 'query', schema: z.ZodType) {
  const parsed = jsonSchema(schema, 'output');
  const { description, examples, ...rest } = parsed.type === 'integer' || parsed.type === 'string' ? parsed : jsonSchema(schema, 'input');
  // What a client sends: zod leaves a list filter's examples out of its input schema, so they come from its metadata.
  const example = ((examples ?? schema.meta()?.examples) as unknown[] | undefined)?.[0];
  return { name, in: where, required: where === 'path', description, schema: rest, ...(example === undefined ? {} : { example }) };
}

const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema });
const json = (schema: JsonSchema, example?: unknown) => ({ 'application/json': { schema, ...(example === undefined ? {} : { example }) } });
const bodySchema = (schema: z.ZodType) => (idOf.has(schema) ? ref(idOf.get(schema)!) : jsonSchema(schema, 'output'));

/** The answers the gateway and the service's guards give on every route, with the body each carries. */
const SHARED = {
  NotModified: { description: 'If-None-Match matched the current ETag: nothing changed, no body', headers: { ETag: { $ref: '#/components/headers/ETag' } } },
  Unauthorized: {
    description: 'Gateway: no key ("Missing API key. Pass your key in the X-API-Key header.") or an unknown key ("Invalid API key")',
    content: json(ref('Error'), { error: 'Missing API key. Pass your key in the X-API-Key header.' }),
  },
  Forbidden: {
    description: 'Gateway: "API key disabled", or "Missing scope <scope>" with requiredScope',
    content: json(ref('ScopeError'), { error: 'Missing scope jobs:write', requiredScope: 'jobs:write' }),
  },
  TooManyRequests: {
    // The limits themselves are kong.yaml's (per consumer and plan); the headers say where a caller stands.
    description: 'Gateway: "Rate limit exceeded" (the per-consumer limits of the key\'s plan), or too many failed key checks from one address',
    headers: {
      'Retry-After': header('Seconds until a request may succeed', { type: 'integer' }),
      'RateLimit-Limit': header('The limit of the current window', { type: 'integer' }),
      'RateLimit-Remaining': header('Requests left in the current window', { type: 'integer' }),
      'RateLimit-Reset': header('Seconds until the window resets', { type: 'integer' }),
    },
    content: json(ref('Error'), { error: 'Rate limit exceeded' }),
  },
  Unavailable: {
    description: 'The database is unreachable or the service is saturated: retry after Retry-After seconds',
    headers: { 'Retry-After': header('Seconds to wait', { type: 'integer' }) },
    content: json(ref('Error'), { error: MESSAGES.unavailable }),
  },
  InternalError: {
    description: `"${MESSAGES.internal}": retrying after a moment is advised`,
    content: json(ref('Error'), { error: MESSAGES.internal }),
  },
};
const shared = (name: keyof typeof SHARED) => ({ $ref: `#/components/responses/${name}` });

/** The answers every authenticated call can get besides its own. */
const COMMON = { '401': shared('Unauthorized'), '403': shared('Forbidden'), '429': shared('TooManyRequests'), '503': shared('Unavailable'), default: shared('InternalError') };

// A write key is checked for jobs:write on top of what every key holds (jobs:read).
const scopesOf = (scope: Route['scope']) => (scope === 'jobs:read' ? ['jobs:read'] : ['jobs:read', scope]);
// One scheme, the header: the page's Authorize takes the key once (api_key is in the Authentication guide).
const security = (scope: Route['scope']) => [{ apiKey: scopesOf(scope) }];

const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'An ETag from an earlier response: answered 304 with no body while nothing visible has changed',
  schema: { type: 'string' },
};

function response(spec: ResponseSpec<ApiSettings>, conditional: boolean, settings: ApiSettings) {
  const headers = Object.fromEntries(
    Object.entries(spec.headers ?? {}).map(([name, h]) => [name, typeof h === 'string' ? header(h) : header(h.description, { type: h.type })]),
  );
  const cached = conditional ? { ETag: { $ref: '#/components/headers/ETag' }, 'Cache-Control': header('private, no-cache') } : {};
  const allHeaders = { ...cached, ...headers };
  return {
    description: say(spec.description, settings),
    ...(Object.keys(allHeaders).length > 0 ? { headers: allHeaders } : {}),
    ...(spec.body ? { content: json(bodySchema(spec.body), typeof spec.example === 'function' ? (spec.example as (s: ApiSettings) => unknown)(settings) : spec.example) } : {}),
  };
}

/** `/api/v1/jobs/:id` as OpenAPI writes it: `/api/v1/jobs/{id}`. */
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

function operation(route: ApiRoute, settings: ApiSettings) {
  const conditional = route.conditional === true;
  const parameters = [
    ...Object.entries(route.query?.parameters.shape ?? {}).map(([name, schema]) => parameter(name, 'query', schema as z.ZodType)),
    ...Object.entries(route.headers ?? {}).map(([name, h]) => ({
      name,
      in: 'header',
      required: false,
      description: h.description,
      schema: { type: 'string', ...(h.pattern ? { pattern: h.pattern } : {}) },
    })),
    ...(conditional ? [IF_NONE_MATCH] : []),
  ];
  const [okStatus, ...others] = Object.keys(route.responses);
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: say(route.summary, settings),
    ...(route.description ? { description: say(route.description, settings) } : {}),
    security: security(route.scope),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: route.body.optional !== true,
            description: route.body.description,
            // Unknown fields are refused (400 naming them); zod's input schema would not say so.
            content: { 'application/json': { schema: { ...jsonSchema(route.body.schema, 'input'), additionalProperties: false }, example: route.body.example } },
          },
        }
      : {}),
    responses: {
      [okStatus!]: response(route.responses[okStatus!]!, conditional, settings),
      ...(conditional ? { '304': shared('NotModified') } : {}),
      ...Object.fromEntries(others.map((status) => [status, response(route.responses[status]!, false, settings)])),
      ...COMMON,
      // A route's own answer for a common status (one that says more) replaces the shared one.
      ...Object.fromEntries(others.filter((status) => status in COMMON).map((status) => [status, response(route.responses[status]!, false, settings)])),
    },
  };
}

function paths(routes: readonly ApiRoute[], settings: ApiSettings) {
  const byPath: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    const item = (byPath[path] ??= {});
    if (route.params) item.parameters = Object.entries(route.params.shape).map(([name, schema]) => parameter(name, 'path', schema as z.ZodType));
    item[route.method] = operation(route, settings);
  }
  return byPath;
}

/** What we POST to a subscription's URL (OpenAPI 3.1's `webhooks`): one operation per event type. */
function webhookEvents({ webhooks }: ApiSettings) {
  const headers = {
    'webhook-id': header('The event id (also in the body): the same on every retry and replay'),
    'webhook-timestamp': header('Unix seconds when this attempt was signed'),
    'webhook-signature': header('Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per valid secret (the current one and up to two replaced within 24 h)'),
  };
  const event = (name: 'JobUpdatedEvent' | 'JobRemovedEvent' | 'WebhookTestEvent', summary: string, example: unknown) => ({
    post: {
      operationId: name.replace(/^\w/, (first) => first.toLowerCase()),
      summary,
      description: `Verify the signature with a Standard Webhooks library (e.g. the standardwebhooks npm package), answer 2xx within ${spoken(webhooks.timeoutMs)}, and drop event ids you already applied. Anything else is retried with backoff for up to ${spoken(webhooks.retry.giveUpAfterMs)}.`,
      parameters: Object.entries(headers).map(([name, spec]) => ({ name, in: 'header', required: true, ...spec })),
      requestBody: { required: true, content: json(ref(name), example) },
      responses: { '2XX': { description: 'Delivered' }, default: { description: 'Not delivered: tried again later (410 Gone disables the subscription)' } },
    },
  });
  return {
    'job.updated': event('JobUpdatedEvent', 'A job is listable as it is now: upsert it', EVENT_EXAMPLE),
    'job.removed': event('JobRemovedEvent', 'A job is no longer listable: remove it', { ...EVENT_EXAMPLE, type: 'job.removed', data: { id: EVENT_EXAMPLE.data.id } }),
    [TEST_EVENT_TYPE]: event('WebhookTestEvent', 'The test you asked for (POST /api/v1/webhooks/{id}/test): answer 2xx, apply nothing', TEST_EVENT_EXAMPLE),
  };
}

/** Where the page's "Try it out" sends requests: the public gateway when configured, and npm start's. */
export const LOCAL_GATEWAY_URL = 'http://127.0.0.1:8000';

function servers(publicUrl: string | undefined) {
  const local = { url: LOCAL_GATEWAY_URL, description: 'The local gateway of `npm start`, with the demo keys' };
  if (!publicUrl || publicUrl === LOCAL_GATEWAY_URL) return [local];
  return [{ url: publicUrl, description: 'Production: the API gateway' }, local];
}

const INTRO =
  "Read the organisation's live job listings, keep a mirror of them, and post new jobs with a write key. " +
  'Every request goes through the API gateway with your key in the `X-API-Key` header. ' +
  'Read the guides below first; the operations follow them.';

/** The document for a route table under `settings`: what the settings decide is stated as they decide it. */
export function openApiDocument(routes: readonly ApiRoute[], settings: ApiSettings) {
  return {
    openapi: '3.1.1',
    info: {
      title: 'Job Listings API',
      version: '1.0.0',
      description: [INTRO, ...GUIDES.map((guide) => withFacts(guide.text, settings.webhooks))].join('\n\n'),
    },
    servers: servers(settings.publicUrl),
    tags: [
      { name: 'jobs', description: 'Listing, reading, following and creating jobs. Errors, limits and paging: the guides above.' },
      { name: 'webhooks', description: 'Subscriptions to job changes; the events themselves are under `webhooks`.' },
      { name: 'meta', description: 'The contract itself, as this OpenAPI document.' },
    ],
    security: security('jobs:read'),
    paths: paths(routes, settings),
    webhooks: webhookEvents(settings),
    components: {
      schemas: componentSchemas(),
      responses: SHARED,
      headers: { ETag: header('SHA-256 of the exact body; send it back in If-None-Match') },
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'Your API key. For quick tests only, the query parameter api_key also works (the header wins when both are sent).',
        },
      },
    },
  };
}

import { z } from 'zod';
import { MESSAGES } from '../errors';
import { Job, Salary, Tombstone } from '../../domain/job';
import { GUIDES, withFacts } from './guides';
import { ChangeList, JobEnvelope, JobList } from '../jobs/contract/responses';
import { ErrorBody, ScopeErrorBody, ValidationErrorBody } from '../http/responses';
import { documented } from '../http/documented';
import {
  CHALLENGE_HEADERS,
  CONDITIONAL_HEADERS,
  GATEWAY_HEADERS,
  RATE_LIMIT_HEADERS,
  RETRY_HEADERS,
  type HeaderDeclaration,
} from '../headers';
import { say, type ResponseSpec, type Route } from '../http/route';
import {
  CreatedWebhook,
  EVENT_EXAMPLE,
  FeedRestoredEvent,
  JobRemovedEvent,
  JobUpdatedEvent,
  RESTORED_EVENT_EXAMPLE,
  RESTORED_EVENT_TYPE,
  TEST_EVENT_EXAMPLE,
  TEST_EVENT_TYPE,
  Webhook,
  WebhookTestEvent,
} from '../webhooks/contract';
import { spoken } from '../webhooks/settings';
import type { ApiRoute, ApiSettings } from './settings';

/** The OpenAPI 3.1 document, generated from the route table (routes.ts). */

type JsonSchema = Record<string, unknown>;

// Named schemas become components; a route's schema that is (or holds) one of them gets a $ref.
const NAMED = {
  Job,
  Salary,
  Tombstone,
  JobList,
  JobEnvelope,
  ChangeList,
  Error: ErrorBody,
  ScopeError: ScopeErrorBody,
  ValidationError: ValidationErrorBody,
  Webhook,
  WebhookWithSecret: CreatedWebhook.shape.data,
  JobUpdatedEvent,
  JobRemovedEvent,
  FeedRestoredEvent,
  WebhookTestEvent,
};
const components = z.registry<{ id: string }>();
for (const [id, schema] of Object.entries(NAMED)) components.add(schema, { id });
const idOf = new Map<z.ZodType, string>(Object.entries(NAMED).map(([id, schema]) => [schema as z.ZodType, id]));

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(components, { uri: (id) => `#/components/schemas/${id}` });
  // OpenAPI 3.1's base dialect is JSON Schema 2020-12 (no jsonSchemaDialect needed); components carry no $schema or $id.
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema as JsonSchema]),
  );
}

/** A JSON Schema without the dialect (OpenAPI 3.1's default, JSON Schema 2020-12, applies), each documented schema as it is stated. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema: generated }) => {
      const stated = documented.get(zodSchema as unknown as z.ZodType);
      if (!stated) return;
      for (const key of Object.keys(generated)) delete (generated as JsonSchema)[key];
      Object.assign(generated, jsonSchema(stated, io));
    },
  }) as JsonSchema;
  return rest;
}

/** An answer's schema, with every named schema it holds as a $ref to its component (one named type for a generated client). */
function answerSchema(schema: z.ZodType): JsonSchema {
  const {
    $schema: _dialect,
    $defs: _named,
    ...rest
  } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any', metadata: components }) as JsonSchema;
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
}

/** Both spellings of several values, which the API reads alike (validate.ts): `state=CA&state=TX` and `state=CA,TX`. */
const severalValues = (name: string, values: readonly string[]) =>
  `Several: repeat it (\`${values.map((value) => `${name}=${value}`).join('&')}\`, what OpenAPI's default sends) or send a comma list (\`${name}=${values.join(',')}\`), no spaces around values.`;

/** A parameter's schema: the parsed value's when it is a plain one, or an array (OpenAPI's default form style, exploded). */
function parameter(name: string, where: 'path' | 'query', schema: z.ZodType) {
  const parsed = jsonSchema(schema, 'output');
  const list = parsed.type === 'array';
  const { description, examples, ...rest } =
    list || parsed.type === 'integer' || parsed.type === 'string' ? parsed : jsonSchema(schema, 'input');
  // What a client sends: zod leaves a list filter's examples out of its input schema, so they come from its metadata.
  const sent = ((examples ?? schema.meta()?.examples) as unknown[] | undefined)?.[0];
  const example = list && typeof sent === 'string' ? sent.split(',') : sent;
  return {
    name,
    in: where,
    required: where === 'path',
    description: list ? `${description as string} ${severalValues(name, example as string[])}` : description,
    ...(list ? { style: 'form', explode: true } : {}),
    schema: rest,
    ...(example === undefined ? {} : { example }),
  };
}

const header = (description: string) => ({ description, schema: { type: 'string' } });
const json = (schema: JsonSchema, example?: unknown) => ({
  'application/json': { schema, ...(example === undefined ? {} : { example }) },
});
const bodySchema = (schema: z.ZodType) => (idOf.has(schema) ? ref(idOf.get(schema)!) : answerSchema(schema));

/**
 * A header as the answers of `status` carry it, inline: a generated client types a referenced header
 * as always present. Required only where every such answer carries it: the gateway's ids always; its
 * rate limits on a success (a refusal before them, a key check or a body over the limit, has none);
 * a 5xx may be the gateway's own, with its ids alone.
 */
function headerObject(name: string, declared: HeaderDeclaration, status: string) {
  const code = Number(status); // NaN for `default`
  const required =
    name in GATEWAY_HEADERS ||
    (declared.sometimes !== true && code < 500 && (!(name in RATE_LIMIT_HEADERS) || code < 400));
  return { description: declared.description, required, schema: declared.schema };
}
const headersOf = (status: string, ...groups: Array<Record<string, HeaderDeclaration>>) =>
  Object.fromEntries(
    groups.flatMap((group) => Object.entries(group)).map(([name, h]) => [name, headerObject(name, h, status)]),
  );
// The gateway's ids are on every answer; its rate limits on every answer to a key that passed its checks.
const KEYED = [GATEWAY_HEADERS, RATE_LIMIT_HEADERS];

/** The answers the gateway and the service's guards give on every route, with the body each carries. */
const SHARED = {
  Unauthorized: {
    description:
      'Gateway: no key ("Missing API key. Pass your key in the X-API-Key header.") or an unknown key ("Invalid API key")',
    headers: headersOf('401', GATEWAY_HEADERS, CHALLENGE_HEADERS),
    content: json(ref('Error'), { error: 'Missing API key. Pass your key in the X-API-Key header.' }),
  },
  Forbidden: {
    description: 'Gateway: "API key disabled", or "Missing scope <scope>" with requiredScope',
    headers: headersOf('403', GATEWAY_HEADERS),
    content: json(ref('ScopeError'), { error: 'Missing scope jobs:write', requiredScope: 'jobs:write' }),
  },
  TooManyRequests: {
    // The limits themselves are kong.yaml's (per consumer and plan); the headers say where a caller stands.
    description:
      'Gateway: "Rate limit exceeded" (the per-consumer limits of the key\'s plan), or too many failed key checks from one address',
    headers: headersOf('429', RETRY_HEADERS, ...KEYED),
    content: json(ref('Error'), { error: 'Rate limit exceeded' }),
  },
  Unavailable: {
    description: 'The database is unreachable or the service is saturated: retry after Retry-After seconds',
    headers: headersOf('503', RETRY_HEADERS, ...KEYED),
    content: json(ref('Error'), { error: MESSAGES.unavailable }),
  },
  InternalError: {
    description: `"${MESSAGES.internal}": retrying after a moment is advised`,
    headers: headersOf('default', ...KEYED),
    content: json(ref('Error'), { error: MESSAGES.internal }),
  },
};
const shared = (name: keyof typeof SHARED) => ({ $ref: `#/components/responses/${name}` });

/** The answers every authenticated call can get besides its own. */
const COMMON = {
  '401': shared('Unauthorized'),
  '403': shared('Forbidden'),
  '429': shared('TooManyRequests'),
  '503': shared('Unavailable'),
  default: shared('InternalError'),
};

// A write key is checked for jobs:write on top of what every key holds (jobs:read).
const scopesOf = (scope: Route['scope']) => (scope === 'jobs:read' ? ['jobs:read'] : ['jobs:read', scope]);
// The header, or (the spec's second way, for quick tests only) the api_key query parameter.
const security = (scope: Route['scope']) => [{ apiKey: scopesOf(scope) }, { apiKeyQuery: scopesOf(scope) }];

const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'An ETag from an earlier response: answered 304 with no body while nothing visible has changed',
  // Node refuses request headers over 16 KB altogether.
  schema: { type: 'string', maxLength: 16_384 },
};

/** The headers a route's answer of `status` carries: the gateway's, the conditional ones, and the route's own. */
const answerHeaders = (spec: ResponseSpec<ApiSettings>, conditional: boolean, status: string) =>
  headersOf(status, ...KEYED, ...(conditional ? [CONDITIONAL_HEADERS] : []), spec.headers ?? {});

function response(spec: ResponseSpec<ApiSettings>, status: string, conditional: boolean, settings: ApiSettings) {
  return {
    description: say(spec.description, settings),
    headers: answerHeaders(spec, conditional, status),
    ...(spec.body
      ? {
          content: json(
            bodySchema(spec.body),
            typeof spec.example === 'function' ? (spec.example as (s: ApiSettings) => unknown)(settings) : spec.example,
          ),
        }
      : {}),
  };
}

/** A 304 carries what the 200 would have, but no body (RFC 9110 15.4.5). */
const notModified = (ok: ResponseSpec<ApiSettings>) => ({
  description: 'If-None-Match matched the current ETag: nothing changed, no body',
  headers: answerHeaders(ok, true, '304'),
});

/** `/api/v1/jobs/:id` as OpenAPI writes it: `/api/v1/jobs/{id}`. */
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

function operation(route: ApiRoute, settings: ApiSettings) {
  const conditional = route.conditional === true;
  const parameters = [
    ...Object.entries(route.query?.parameters.shape ?? {}).map(([name, schema]) =>
      parameter(name, 'query', schema as z.ZodType),
    ),
    ...Object.entries(route.headers ?? {}).map(([name, h]) => ({
      name,
      in: 'header',
      required: false,
      description: h.description,
      schema: {
        type: 'string',
        ...(h.pattern ? { pattern: h.pattern } : {}),
        ...(h.maxLength ? { maxLength: h.maxLength } : {}),
      },
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
            content: {
              'application/json': {
                schema: { ...jsonSchema(route.body.schema, 'input'), additionalProperties: false },
                example: route.body.example,
              },
            },
          },
        }
      : {}),
    responses: {
      [okStatus!]: response(route.responses[okStatus!]!, okStatus!, conditional, settings),
      ...(conditional ? { '304': notModified(route.responses[okStatus!]!) } : {}),
      ...Object.fromEntries(
        others.map((status) => [status, response(route.responses[status]!, status, false, settings)]),
      ),
      ...COMMON,
      // A route's own answer for a common status (one that says more) replaces the shared one.
      ...Object.fromEntries(
        others
          .filter((status) => status in COMMON)
          .map((status) => [status, response(route.responses[status]!, status, false, settings)]),
      ),
    },
  };
}

function paths(routes: readonly ApiRoute[], settings: ApiSettings) {
  const byPath: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    const item = (byPath[path] ??= {});
    if (route.params)
      item.parameters = Object.entries(route.params.shape).map(([name, schema]) =>
        parameter(name, 'path', schema as z.ZodType),
      );
    item[route.method] = operation(route, settings);
    if (route.method === 'get') item.head = head(item.get as ReturnType<typeof operation>);
  }
  return byPath;
}

/** HEAD, which the router serves wherever GET is: the same answers and headers, without their bodies. */
function head(get: ReturnType<typeof operation>) {
  const bodiless = ({ content: _body, ...answer }: { content?: unknown; [key: string]: unknown }) => answer;
  const responses = Object.fromEntries(
    Object.entries(get.responses).map(([status, answer]) => [
      status,
      bodiless(
        '$ref' in answer
          ? SHARED[answer.$ref.split('/').pop() as keyof typeof SHARED]
          : (answer as { content?: unknown }),
      ),
    ]),
  );
  return { ...get, operationId: `${get.operationId}Head`, summary: `${get.summary} (headers only)`, responses };
}

/** What we POST to a subscription's URL (OpenAPI 3.1's `webhooks`): one operation per event type. */
function webhookEvents({ webhooks }: ApiSettings) {
  const headers = {
    'webhook-id': header('The event id (also in the body): the same on every retry and replay'),
    'webhook-timestamp': header('Unix seconds when this attempt was signed'),
    'webhook-signature': header(
      'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per valid secret (the current one and up to two replaced within 24 h)',
    ),
  };
  const event = (
    name: 'JobUpdatedEvent' | 'JobRemovedEvent' | 'FeedRestoredEvent' | 'WebhookTestEvent',
    summary: string,
    example: unknown,
  ) => ({
    post: {
      operationId: name.replace(/^\w/, (first) => first.toLowerCase()),
      summary,
      description: `Verify the signature with a Standard Webhooks library (e.g. the standardwebhooks npm package), answer 2xx within ${spoken(webhooks.timeoutMs)}, and drop event ids you already applied. Anything else is retried with backoff for up to ${spoken(webhooks.retry.giveUpAfterMs)}.`,
      parameters: Object.entries(headers).map(([name, spec]) => ({ name, in: 'header', required: true, ...spec })),
      requestBody: { required: true, content: json(ref(name), example) },
      responses: {
        '2XX': { description: 'Delivered' },
        default: { description: 'Not delivered: tried again later (410 Gone disables the subscription)' },
      },
    },
  });
  return {
    'job.updated': event('JobUpdatedEvent', 'A job is listable as it is now: upsert it', EVENT_EXAMPLE),
    'job.removed': event('JobRemovedEvent', 'A job is no longer listable: remove it', {
      ...EVENT_EXAMPLE,
      type: 'job.removed',
      data: { id: EVENT_EXAMPLE.data.id },
    }),
    [RESTORED_EVENT_TYPE]: event(
      'FeedRestoredEvent',
      'Our database was restored from a backup: catch up through the feed from your saved position',
      RESTORED_EVENT_EXAMPLE,
    ),
    [TEST_EVENT_TYPE]: event(
      'WebhookTestEvent',
      'The test you asked for (POST /api/v1/webhooks/{id}/test): answer 2xx, apply nothing',
      TEST_EVENT_EXAMPLE,
    ),
  };
}

/** Where the page's "Try it out" sends requests: the public gateway, and npm start's. */
export const LOCAL_GATEWAY_URL = 'http://127.0.0.1:8000';

// x-internal: false, as OWASP's inventory rule asks: both are for partners.
const LOCAL_SERVER = {
  url: LOCAL_GATEWAY_URL,
  description: 'The local gateway of `npm start`, with the demo keys',
  'x-internal': false,
};

/** Production first: PUBLIC_URL, else a placeholder for the host we give you with your key. */
function servers(publicUrl: string | undefined) {
  // npm start's own document: its gateway is the only one.
  if (publicUrl === LOCAL_GATEWAY_URL) return [LOCAL_SERVER];
  const production = publicUrl
    ? { url: publicUrl, description: 'Production: the API gateway' }
    : {
        url: 'https://{gateway}',
        description: 'Production: the API gateway, at the host we give you with your key',
        variables: { gateway: { default: 'jobs-api.example.org', description: "The API gateway's host name" } },
      };
  return [{ ...production, 'x-internal': false }, LOCAL_SERVER];
}

const INTRO =
  "Read the organisation's live job listings, keep a mirror of them, and post new jobs with a write key. " +
  'Every request goes through the API gateway with your key in the `X-API-Key` header. ' +
  'Read the guides below first; the operations follow them.';

const INT32 = 2 ** 31;

/** Every integer schema says its width, as generated clients and OWASP's rules ask: int32 when its bounds fit one, else int64. */
function withIntegerWidths<T>(node: T): T {
  if (Array.isArray(node)) return node.map(withIntegerWidths) as T;
  if (node === null || typeof node !== 'object') return node;
  const schema: JsonSchema = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, withIntegerWidths(value)]),
  );
  if (schema.type !== 'integer' || 'format' in schema) return schema as T;
  const fits = (bound: unknown) => typeof bound === 'number' && bound >= -INT32 && bound < INT32;
  return { ...schema, format: fits(schema.minimum) && fits(schema.maximum) ? 'int32' : 'int64' } as T;
}

/** The document for a route table under `settings`: what the settings decide is stated as they decide it. */
export function openApiDocument(routes: readonly ApiRoute[], settings: ApiSettings) {
  return withIntegerWidths({
    openapi: '3.1.1',
    info: {
      title: 'Job Listings API',
      version: '1.0.0',
      description: [INTRO, ...GUIDES.map((guide) => withFacts(guide.text, settings.webhooks))].join('\n\n'),
    },
    servers: servers(settings.publicUrl),
    tags: [
      {
        name: 'jobs',
        description: 'Listing, reading, following and creating jobs. Errors, limits and paging: the guides above.',
      },
      { name: 'webhooks', description: 'Subscriptions to job changes; the events themselves are under `webhooks`.' },
      { name: 'meta', description: 'The contract itself, as this OpenAPI document.' },
    ],
    security: security('jobs:read'),
    paths: paths(routes, settings),
    webhooks: webhookEvents(settings),
    components: {
      schemas: componentSchemas(),
      responses: SHARED,
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'Your API key, in the X-API-Key header: the way to send it.',
        },
        apiKeyQuery: {
          type: 'apiKey',
          in: 'query',
          name: 'api_key',
          description:
            'The same key as the query parameter api_key: for quick tests only, as URLs end up in logs and histories (the header wins when both are sent).',
        },
      },
    },
  });
}

import { z } from 'zod';
import { ChangesQuery } from './changes-query';
import { CreateJobBody } from './create-body';
import { Job, Salary, Tombstone } from './job';
import { ListQuery } from './list-query';
import { ChangeList, ErrorBody, JobEnvelope, JobList, ScopeErrorBody, ValidationErrorBody } from './responses';

/**
 * The OpenAPI 3.1 document, generated from the zod schemas the service itself uses (Job,
 * the response envelopes, the create body, the query parameters). `npm run openapi` writes it to
 * docs/openapi.json; the service serves the same object at GET /api/v1/openapi.json; the jest
 * helpers validate every response against the committed copy.
 */

type JsonSchema = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

// Named schemas become components; anything else referring to them gets a $ref.
const components = z.registry<{ id: string }>();
for (const [id, schema] of Object.entries({ Job, Salary, Tombstone, JobList, JobEnvelope, ChangeList, Error: ErrorBody, ScopeError: ScopeErrorBody, ValidationError: ValidationErrorBody })) {
  components.add(schema, { id });
}

function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(components, { uri: (id) => `#/components/schemas/${id}` });
  // OpenAPI names the dialect once (jsonSchemaDialect); components carry no $schema or $id.
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema as JsonSchema]),
  );
}

/** A JSON Schema without the dialect (OpenAPI names it once, in jsonSchemaDialect). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/**
 * A query parameter's schema: the parsed value's when it is a plain one (page and limit are
 * integers with bounds), else what the client sends (a comma list is a string with a pattern).
 */
function parameterSchema(schema: z.ZodType): JsonSchema {
  const parsed = jsonSchema(schema, 'output');
  return parsed.type === 'integer' || parsed.type === 'string' ? parsed : jsonSchema(schema, 'input');
}

// One description per parameter, checked against the query schemas: a new parameter without
// one fails `npm run lint`.
const LIST_PARAMETERS: Record<keyof typeof ListQuery.shape, string> = {
  status: 'One of active, open, paused, closed, or a comma list of them. Default: active,open. draft is never listed (400).',
  type: 'One of full-time, part-time, contract, contract-to-hire, direct-hire, managed-teams, or a comma list. remote is not a type (400): use workplace.',
  workplace: 'One of on-site, hybrid, remote, or a comma list.',
  department: 'Exact department name, case-insensitive, surrounding spaces ignored (+ and %20 are spaces). 1 to 100 characters.',
  page: 'Offset page, from 1 (default 1). A page past the end is empty with true meta. Not with cursor (400).',
  cursor: 'Continue a cursor walk: meta.nextCursor of the previous page (or the Link header\'s URL). Empty starts a walk at the top. Belongs to the filter it was issued for: another filter, or an altered cursor, is a 400. Not with page (400).',
  limit: 'Jobs per page, 1 to 100 (default 20); anything else is a 400, never clamped.',
};
const CHANGES_PARAMETERS: Record<keyof typeof ChangesQuery.shape, string> = {
  since: 'meta.nextSince of the previous call. Absent (or empty): the feed from the beginning. An altered or invented token is a 400.',
  limit: 'Changes per page, 1 to 500 (default 100).',
};

function queryParameters(shape: Record<string, z.ZodType>, descriptions: Record<string, string>) {
  return Object.entries(shape).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    description: descriptions[name],
    schema: parameterSchema(schema),
  }));
}

const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

const RESPONSES = {
  NotModified: { description: 'If-None-Match matched the current ETag: nothing changed, no body', headers: { ETag: { $ref: '#/components/headers/ETag' } } },
  BadRequest: { description: 'A query parameter or token is not valid; the message says which', content: json(ref('Error')) },
  Unauthorized: {
    description: 'Gateway: no key ("Missing API key. Pass your key in the X-API-Key header.") or an unknown key ("Invalid API key")',
    content: json(ref('Error')),
  },
  Forbidden: { description: 'Gateway: "API key disabled", or "Missing scope <scope>" with requiredScope', content: json(ref('ScopeError')) },
  NotFound: { description: 'Job not found: unknown id, not a UUID, removed, or another consumer\'s draft', content: json(ref('Error')) },
  MethodNotAllowed: {
    description: 'This path does not take this method',
    headers: { Allow: header('The methods this path takes, e.g. GET, HEAD, POST') },
    content: json(ref('Error')),
  },
  TooManyRequests: {
    description: 'Gateway: "Rate limit exceeded" (per consumer: reads 120/minute and 3,000/hour, writes 30/minute and 500/hour), or too many failed key checks from one address',
    headers: {
      'Retry-After': header('Seconds until a request may succeed', { type: 'integer' }),
      'RateLimit-Limit': header('The limit of the current window', { type: 'integer' }),
      'RateLimit-Remaining': header('Requests left in the current window', { type: 'integer' }),
      'RateLimit-Reset': header('Seconds until the window resets', { type: 'integer' }),
    },
    content: json(ref('Error')),
  },
  Unavailable: {
    description: 'The database is unreachable or the service is saturated: retry after Retry-After seconds',
    headers: { 'Retry-After': header('Seconds to wait', { type: 'integer' }) },
    content: json(ref('Error')),
  },
  InternalError: { description: '"Internal server error": retrying after a moment is advised', content: json(ref('Error')) },
};
const r = (name: keyof typeof RESPONSES) => ({ $ref: `#/components/responses/${name}` });

/** The answers every authenticated call can get besides its own. */
const COMMON = { '401': r('Unauthorized'), '403': r('Forbidden'), '429': r('TooManyRequests'), '503': r('Unavailable'), default: r('InternalError') };

const readSecurity = [{ apiKeyHeader: ['jobs:read'] }, { apiKeyQuery: ['jobs:read'] }];
const writeSecurity = [{ apiKeyHeader: ['jobs:read', 'jobs:write'] }, { apiKeyQuery: ['jobs:read', 'jobs:write'] }];

const cachedOk = (description: string, schema: JsonSchema, extraHeaders: Record<string, unknown> = {}) => ({
  description,
  headers: { ETag: { $ref: '#/components/headers/ETag' }, 'Cache-Control': header('private, no-cache'), ...extraHeaders },
  content: json(schema),
});

const ifNoneMatch = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'An ETag from an earlier response: answered 304 with no body while nothing visible has changed',
  schema: { type: 'string' },
};

/** PUT, PATCH and DELETE reach the service through the gateway and are answered 405. */
function notAllowed(path: string) {
  const operation = (method: string) => ({
    summary: `Not supported: ${method} ${path} answers 405 with Allow`,
    operationId: `${method.toLowerCase()}${path.replace(/[^A-Za-z]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`,
    tags: ['jobs'],
    security: readSecurity,
    responses: { '405': r('MethodNotAllowed'), ...COMMON },
  });
  return { put: operation('PUT'), patch: operation('PATCH'), delete: operation('DELETE') };
}

function buildDocument() {
  const createBody = jsonSchema(CreateJobBody, 'input');
  // Unknown fields are refused (400 naming them); zod's input schema would not say so.
  createBody.additionalProperties = false;
  return {
    openapi: '3.1.1',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Job Listings API',
      version: '1.0.0',
      description:
        'Read the organisation\'s live job listings, keep a mirror of them (cursor pages, a change feed with tombstones, ' +
        'conditional GETs), and post new jobs with a write key. Every error is JSON with an `error` string. ' +
        'Any other method on a jobs path is a 405 with Allow; an unknown path is a 404.',
    },
    tags: [{ name: 'jobs' }, { name: 'meta' }],
    security: readSecurity,
    paths: {
      '/api/v1/jobs': {
        get: {
          operationId: 'listJobs',
          tags: ['jobs'],
          summary: 'List jobs, newest first (createdAt desc, then id desc)',
          description:
            'Offset pages with page, or a cursor walk with cursor (empty to start): a walk never repeats or skips a job that ' +
            'existed when it began, however many are created meanwhile. Both modes send Link: <...>; rel="next" (a URL ' +
            'relative to the one called) while another page follows.',
          parameters: [...queryParameters(ListQuery.shape, LIST_PARAMETERS), ifNoneMatch],
          responses: {
            '200': cachedOk('A page of jobs', ref('JobList'), { Link: header('`</api/v1/jobs?...&cursor=...>; rel="next"` while another page follows') }),
            '304': r('NotModified'),
            '400': r('BadRequest'),
            ...COMMON,
          },
        },
        post: {
          operationId: 'createJob',
          tags: ['jobs'],
          summary: 'Create a job (stored as draft unless a status is sent)',
          security: writeSecurity,
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: 'Makes a retry safe: the same body with the same key within 24 hours answers the first 201 again instead of creating a second job',
              schema: { type: 'string', pattern: '^[\\x21-\\x7E]{1,255}$' },
            },
          ],
          requestBody: {
            required: true,
            description: 'application/json, at most 100 KB (gzip allowed with Content-Encoding: gzip, 100 KB decoded). Unknown and organisation-only fields are refused by name.',
            content: { 'application/json': { schema: createBody } },
          },
          responses: {
            '201': {
              description: 'Created; the body is what GET /api/v1/jobs/{id} answers',
              headers: {
                Location: header('/api/v1/jobs/{id}'),
                'Idempotent-Replayed': header('true when this is the stored answer to an earlier request with the same Idempotency-Key'),
              },
              content: json(ref('JobEnvelope')),
            },
            '409': {
              description: 'A request with this Idempotency-Key is still being processed: retry after Retry-After',
              headers: { 'Retry-After': header('Seconds to wait', { type: 'integer' }) },
              content: json(ref('Error')),
            },
            '422': { description: 'This Idempotency-Key was used with a different body', content: json(ref('Error')) },
            '400': { description: 'Validation failed (every problem in details), malformed JSON, or not a JSON object', content: json(ref('ValidationError')) },
            '413': { description: 'Body over 100 KB ("Request size limit exceeded" from the gateway)', content: json(ref('Error')) },
            '415': { description: 'Content-Type is not application/json, or an unsupported body encoding', content: json(ref('Error')) },
            ...COMMON,
          },
        },
        ...notAllowed('/api/v1/jobs'),
      },
      '/api/v1/jobs/changes': {
        get: {
          operationId: 'listJobChanges',
          tags: ['jobs'],
          summary: 'Every job whose public view changed after a position, in change order',
          description:
            'Each entry is the job as it is now when listable (active, open, paused, closed), or {"id","removed":true} once it ' +
            'was soft-deleted, deleted or went back to draft. Drafts never appear. Replaying from the beginning yields exactly ' +
            'the listable jobs; continue with meta.nextSince, at once while meta.hasMore.',
          parameters: [...queryParameters(ChangesQuery.shape, CHANGES_PARAMETERS), ifNoneMatch],
          responses: { '200': cachedOk('A page of changes', ref('ChangeList')), '304': r('NotModified'), '400': r('BadRequest'), ...COMMON },
        },
      },
      '/api/v1/jobs/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, description: 'The job\'s UUID (any case)', schema: { type: 'string' } }],
        get: {
          operationId: 'getJob',
          tags: ['jobs'],
          summary: 'One job (any status but draft; a draft only to the consumer that created it)',
          parameters: [ifNoneMatch],
          responses: { '200': cachedOk('The job', ref('JobEnvelope')), '304': r('NotModified'), '404': r('NotFound'), ...COMMON },
        },
        ...notAllowed('/api/v1/jobs/{id}'),
      },
      '/api/v1/openapi.json': {
        get: {
          operationId: 'getOpenApiDocument',
          tags: ['meta'],
          summary: 'This document',
          parameters: [ifNoneMatch],
          responses: { '200': cachedOk('The OpenAPI document', { type: 'object' }), '304': r('NotModified'), ...COMMON },
        },
      },
    },
    components: {
      schemas: componentSchemas(),
      responses: RESPONSES,
      headers: { ETag: header('SHA-256 of the exact body; send it back in If-None-Match') },
      securitySchemes: {
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The recommended way to send a key' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'For quick testing only; the header wins when both are sent' },
      },
    },
  };
}

let built: ReturnType<typeof buildDocument> | undefined;

/** The document (built once per process). */
export function openApiDocument(): ReturnType<typeof buildDocument> {
  built ??= buildDocument();
  return built;
}

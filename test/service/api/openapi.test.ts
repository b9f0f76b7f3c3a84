/**
 * The OpenAPI document: generated from the service's own zod schemas, committed, served, and
 * used to check every response the suites receive (test/helpers/openapi.ts).
 */
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { OPENAPI_PATH, renderOpenApi } from '../../../scripts/openapi';
import { ChangesQuery } from '../../../service/jobs/contract/queries';
import { ListQuery } from '../../../service/jobs/contract/queries';
import { reader } from '../../helpers/consumers';
import { call } from '../../helpers/http';
import { validateResponse } from '../../helpers/openapi';
import {
  CHALLENGE_HEADERS,
  CONDITIONAL_HEADERS,
  CREATED_HEADERS,
  ENCODING_HEADERS,
  GATEWAY_HEADERS,
  NEXT_PAGE_HEADERS,
  RATE_LIMIT_HEADERS,
  REPLAYED_HEADERS,
  RETRY_HEADERS,
} from '../../../service/headers';
import { sharedTestService } from '../../helpers/service';
import type { Parsed } from '../../helpers/parsed';

const committed = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));

describe('docs/openapi.json', () => {
  test('is what the schemas generate today (else: npm run openapi)', () => {
    const current = readFileSync(OPENAPI_PATH, 'utf8') === renderOpenApi();
    if (!current) throw new Error('docs/openapi.json is stale: run `npm run openapi` and commit the result');
  });

  test('is OpenAPI 3.1 whose schemas are valid JSON Schema 2020-12', () => {
    expect(committed.openapi).toMatch(/^3\.1\./);
    const ajv = new Ajv2020({ strict: true, strictTypes: false });
    addFormats(ajv);
    ajv.addKeyword('components'); // the container the component schemas live in
    ajv.addSchema({ $id: 'components', components: committed.components });
    for (const name of Object.keys(committed.components.schemas)) {
      expect(() => ajv.getSchema(`components#/components/schemas/${name}`)).not.toThrow();
    }
  });

  test('describes the four operations with every parameter of the query schemas', () => {
    const paths = committed.paths;
    const names = (op: Parsed) => op.parameters.map((p: { name: string }) => p.name);
    expect(names(paths['/api/v1/jobs'].get)).toEqual([...Object.keys(ListQuery.shape), 'If-None-Match']);
    expect(names(paths['/api/v1/jobs/changes'].get)).toEqual([...Object.keys(ChangesQuery.shape), 'If-None-Match']);
    expect(paths['/api/v1/jobs/{id}'].parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true });
    expect(paths['/api/v1/jobs'].post.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['title', 'department', 'type', 'description'],
    });
    expect(paths['/api/v1/jobs'].get.parameters.find((p: { name: string }) => p.name === 'limit').schema).toMatchObject(
      {
        type: 'integer',
        minimum: 1,
        maximum: 100,
        default: 20,
      },
    );
  });

  test('the key in the X-API-Key header, or in api_key for quick tests only, and the scope each operation needs', () => {
    expect(committed.components.securitySchemes).toEqual({
      apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      apiKeyQuery: expect.objectContaining({
        type: 'apiKey',
        in: 'query',
        name: 'api_key',
        description: expect.stringContaining('quick tests only'),
      }),
    });
    expect(committed.security).toEqual([{ apiKey: ['jobs:read'] }, { apiKeyQuery: ['jobs:read'] }]);
    expect(committed.paths['/api/v1/jobs'].post.security).toEqual([
      { apiKey: ['jobs:read', 'jobs:write'] },
      { apiKeyQuery: ['jobs:read', 'jobs:write'] },
    ]);
  });

  test('lists only the operations the API serves: the 405 rule is said once, in the Errors guide', () => {
    const operations = Object.entries<Parsed>(committed.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => m !== 'parameters')
        .map((m) => `${m} ${path}`),
    );
    expect(operations.sort()).toEqual([
      'delete /api/v1/webhooks/{id}',
      'get /api/v1/jobs',
      'get /api/v1/jobs/changes',
      'get /api/v1/jobs/changes/digest',
      'get /api/v1/jobs/changes/digest/{bucket}',
      'get /api/v1/jobs/{id}',
      'get /api/v1/openapi.json',
      'get /api/v1/webhooks',
      'get /api/v1/webhooks/{id}',
      'get /api/v1/webhooks/{id}/attempts',
      'head /api/v1/jobs',
      'head /api/v1/jobs/changes',
      'head /api/v1/jobs/changes/digest',
      'head /api/v1/jobs/changes/digest/{bucket}',
      'head /api/v1/jobs/{id}',
      'head /api/v1/openapi.json',
      'head /api/v1/webhooks',
      'head /api/v1/webhooks/{id}',
      'head /api/v1/webhooks/{id}/attempts',
      'patch /api/v1/webhooks/{id}',
      'post /api/v1/jobs',
      'post /api/v1/webhooks',
      'post /api/v1/webhooks/{id}/enable',
      'post /api/v1/webhooks/{id}/replay',
      'post /api/v1/webhooks/{id}/rotate-secret',
      'post /api/v1/webhooks/{id}/test',
    ]);
    expect(committed.tags.map((t: { name: string }) => t.name)).toEqual(['jobs', 'webhooks', 'meta']);
    expect(committed.info.description).toContain('`405 {"error":"Method not allowed"}` with an `Allow` header');
  });

  test('gives every answer with a body, and the create body, an example that its own schema accepts', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: committed.components });
    // Every reference, at the top or nested in an inline schema, into the components added above.
    const resolve = (schema: Parsed) =>
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
    const checked: string[] = [];
    for (const [path, item] of Object.entries<Parsed>(committed.paths)) {
      for (const [method, operation] of Object.entries<Parsed>(item)) {
        if (method === 'parameters') continue;
        const bodies = Object.entries<Parsed>(operation.responses).map(([status, answer]) => {
          const response = answer.$ref ? committed.components.responses[answer.$ref.split('/').pop()] : answer;
          return [`${method} ${path} ${status}`, response.content?.['application/json']] as const;
        });
        if (operation.requestBody)
          bodies.push([`${method} ${path} request`, operation.requestBody.content['application/json']]);
        for (const [where, content] of bodies) {
          if (!content) continue;
          expect([where, content.example]).not.toEqual([where, undefined]);
          const valid = ajv.compile(resolve(content.schema));
          expect([where, valid(content.example), valid.errors]).toEqual([where, true, null]);
          checked.push(where);
        }
      }
    }
    // The error bodies of the gateway and the guards on every operation, and each route's own.
    expect(checked).toEqual(
      expect.arrayContaining([
        'get /api/v1/jobs 200',
        'get /api/v1/jobs/{id} 404',
        'post /api/v1/jobs request',
        'post /api/v1/jobs 422',
        'get /api/v1/jobs/changes 429',
      ]),
    );
  });

  test('documents every error of decisions.md where it can happen', () => {
    const statuses = (path: string, method: string) => Object.keys(committed.paths[path][method].responses);
    for (const [path, method] of [
      ['/api/v1/jobs', 'get'],
      ['/api/v1/jobs', 'post'],
      ['/api/v1/jobs/{id}', 'get'],
      ['/api/v1/jobs/changes', 'get'],
    ]) {
      expect(statuses(path!, method!)).toEqual(expect.arrayContaining(['401', '403', '429', '503', 'default']));
    }
    expect(statuses('/api/v1/jobs', 'post')).toEqual(expect.arrayContaining(['201', '400', '413', '415']));
    expect(statuses('/api/v1/jobs/{id}', 'get')).toEqual(expect.arrayContaining(['200', '304', '404']));
    const responses = committed.components.responses;
    const rateLimits = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];
    expect(Object.keys(responses.TooManyRequests.headers)).toEqual([
      'Retry-After',
      'X-Kong-Request-Id',
      'X-Request-ID',
      ...rateLimits,
    ]);
    expect(Object.keys(responses.Unavailable.headers)).toEqual([
      'Retry-After',
      'X-Kong-Request-Id',
      'X-Request-ID',
      ...rateLimits,
    ]);
    expect(Object.keys(responses.Unauthorized.headers)).toEqual([
      'X-Kong-Request-Id',
      'X-Request-ID',
      'WWW-Authenticate',
    ]);
    expect(committed.components.schemas.ScopeError.properties.requiredScope.enum).toEqual(['jobs:read', 'jobs:write']);
  });
});

describe('what a validator reading only docs/openapi.json refuses, as the API does', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', ...committed });
  const createBody = ajv.getSchema(`doc#/paths/~1api~1v1~1jobs/post/requestBody/content/application~1json/schema`)!;
  const valid = { title: 'Engineer', department: 'Engineering', type: 'full-time', description: 'Build things.' };

  test.each([
    ['a currency ISO 4217 does not list', { salary: { min: 1, max: 2, currency: 'XXQ' } }],
    ['a month 13', { submissionDueDate: '2027-13-45' }],
    ['a due date that is no date', { submissionDueDate: 'not-a-date' }],
    ['a salary with neither min nor max', { salary: { currency: 'USD' } }],
    ['a date-time without a zone', { submissionDueDate: '2026-12-31T17:00:00' }],
    ['a date before 1970', { submissionDueDate: '1969-12-31' }],
    ['a title of spaces', { title: '   ' }],
    ['a line break in a title', { title: 'a\nb' }],
    ['a requirement list of 101', { requirements: Array.from({ length: 101 }, () => 'x') }],
    ['a due date as a number', { submissionDueDate: 20261231 }],
    ['a salary without a currency', { salary: { min: 5 } }],
    ['a state that is no two-letter code', { state: 'California' }],
    ['a state in lower case', { state: 'tx' }],
  ])('the create body with %s', (_label, change) => {
    expect(createBody({ ...valid, ...change })).toBe(false);
  });

  test.each([
    ['the bare minimum', {}],
    ['a salary with only max', { salary: { min: null, max: 90000, currency: 'EUR' } }],
    ['a salary with only min, max left out', { salary: { min: 5, currency: 'USD' } }],
    ['any two upper-case letters as a state', { state: 'ZZ' }],
    ['a date-time to the minute with an offset', { submissionDueDate: '2026-12-31T17:00+02:00' }],
    ['a line break in the description', { description: 'one\ntwo' }],
  ])('accepts the create body with %s', (_label, change) => {
    expect([createBody({ ...valid, ...change }), createBody.errors]).toEqual([true, null]);
  });

  test("the list filters are arrays of their enums in OpenAPI's default style (form, exploded), which a generated client sends and types as unions", () => {
    const status = committed.paths['/api/v1/jobs'].get.parameters.find((p: { name: string }) => p.name === 'status');
    expect(status).toMatchObject({
      style: 'form',
      explode: true,
      schema: { type: 'array', items: { enum: ['active', 'open', 'paused', 'closed'] } },
      example: ['active', 'paused'],
    });
    expect(status.description).toContain('`status=active&status=paused`');
    expect(status.description).toContain('`status=active,paused`');
    // Spaces around a value: refused here as by the API (list-jobs.test.ts), department's text aside.
    const parameters = committed.paths['/api/v1/jobs'].get.parameters as Parsed[];
    const schemaOf = (name: string) => ajv.compile(parameters.find((p) => p.name === name).schema);
    expect([schemaOf('status')(['paused']), schemaOf('status')([' paused']), schemaOf('state')(['CA', ' TX'])]).toEqual(
      [true, false, false],
    );
    expect(schemaOf('department')(' Engineering ')).toBe(true);
  });

  test('every webhook answer names the one Webhook schema', () => {
    const schemaOf = (path: string, method: string, status: string) =>
      committed.paths[path][method].responses[status].content['application/json'].schema;
    expect(schemaOf('/api/v1/webhooks', 'get', '200').properties.data.items).toEqual({
      $ref: '#/components/schemas/Webhook',
    });
    expect(schemaOf('/api/v1/webhooks/{id}', 'patch', '200').properties.data).toEqual({
      $ref: '#/components/schemas/Webhook',
    });
    expect(schemaOf('/api/v1/webhooks', 'post', '201').properties.data).toEqual({
      $ref: '#/components/schemas/WebhookWithSecret',
    });
    // Nowhere an inline copy of it (its examples may still show the field).
    expect(JSON.stringify(committed.paths)).not.toContain('"disabledReason":{');
  });

  test('headers come from the declarations their senders are typed by, inline, required only where every answer carries them', () => {
    const declared: Record<string, { schema: unknown }> = {
      ...CONDITIONAL_HEADERS,
      ...GATEWAY_HEADERS,
      ...RATE_LIMIT_HEADERS,
      ...CHALLENGE_HEADERS,
      ...ENCODING_HEADERS,
      ...RETRY_HEADERS,
      ...NEXT_PAGE_HEADERS,
      ...CREATED_HEADERS,
      ...REPLAYED_HEADERS,
    };
    // Inline: a generated client types a referenced header as always present.
    expect(JSON.stringify(committed)).not.toContain('#/components/headers/');
    const required = (answer: Parsed) =>
      Object.entries<Parsed>(answer.headers)
        .filter(([, h]) => h.required)
        .map(([name]) => name)
        .sort();
    const optional = (answer: Parsed) =>
      Object.entries<Parsed>(answer.headers)
        .filter(([, h]) => h.required === false)
        .map(([name]) => name)
        .sort();
    const ids = ['X-Kong-Request-Id', 'X-Request-ID'];
    const limits = Object.keys(RATE_LIMIT_HEADERS);
    const list = committed.paths['/api/v1/jobs'].get.responses;
    expect(required(list['200'])).toEqual(['Cache-Control', 'ETag', ...ids, ...limits].sort());
    expect(optional(list['200'])).toEqual(['Link']);
    expect(required(list['304'])).toEqual(['Cache-Control', 'ETag', ...ids, ...limits].sort());
    expect(required(list['400'])).toEqual(ids);
    expect(optional(list['400'])).toEqual([...limits].sort());
    const create = committed.paths['/api/v1/jobs'].post.responses;
    expect(required(create['201'])).toEqual(['Location', ...ids, ...limits].sort());
    expect(optional(create['201'])).toEqual(['Idempotent-Replayed']);
    expect(required(create['409'])).toEqual(['Retry-After', ...ids].sort());
    expect(optional(create['415'])).toEqual(['Accept-Encoding', ...limits].sort());
    const shared = committed.components.responses;
    expect(required(shared.TooManyRequests)).toEqual(['Retry-After', ...ids].sort());
    expect(required(shared.Unavailable)).toEqual(ids);
    expect(required(shared.InternalError)).toEqual(ids);
    expect(required(shared.Unauthorized)).toEqual(ids);
    for (const answer of [list['200'], create['201'], shared.Unauthorized, shared.Unavailable])
      for (const [name, h] of Object.entries<Parsed>(answer.headers))
        expect([name, h.schema]).toEqual([name, declared[name]!.schema]);
    expect(committed.paths['/api/v1/jobs'].head.responses['200']).not.toHaveProperty('content');
  });
});

describe('GET /api/v1/openapi.json', () => {
  const service = sharedTestService({ name: 'openapi' });

  test('serves the committed document', async () => {
    const res = await call(`${service.url}/api/v1/openapi.json`, { headers: reader });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(committed);
  });

  test('other methods are a 405 with Allow', async () => {
    const res = await call(`${service.url}/api/v1/openapi.json`, { method: 'POST', headers: reader });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('HEAD, GET');
  });
});

describe('the response check every suite runs', () => {
  const job = {
    id: '0190f5d8-0000-7000-8000-000000000000',
    postingId: null,
    title: 't',
    department: 'd',
    location: '',
    state: null,
    type: 'contract',
    description: 'x',
    requirements: [],
    responsibilities: [],
    salary: null,
    status: 'active',
    submissionDueDate: null,
    clientName: null,
    vendorName: null,
    postedByName: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: null,
  };
  const list =
    (body: unknown, status = 200, method = 'GET', url = '/api/v1/jobs') =>
    () =>
      validateResponse({
        method,
        url,
        status,
        contentType: 'application/json; charset=utf-8',
        body,
        text: JSON.stringify(body),
      });
  const meta = { total: 1, page: 1, limit: 20, totalPages: 1 };

  test('accepts what the service answers', () => {
    expect(list({ data: [job], meta })).not.toThrow();
    expect(
      list(
        { data: [{ id: job.id, removed: true }], meta: { nextSince: 'x', hasMore: false, limit: 100 } },
        200,
        'GET',
        '/api/v1/jobs/changes',
      ),
    ).not.toThrow();
    expect(list({ error: 'Rate limit exceeded', request_id: 'abc' }, 429)).not.toThrow();
  });

  test.each([
    ['an internal field in a job', { data: [{ ...job, payRate: 50 }], meta }, 200],
    ['a field missing', { data: [{ ...job, title: undefined }], meta }, 200],
    ['a timestamp without milliseconds', { data: [{ ...job, createdAt: '2026-01-01T00:00:00Z' }], meta }, 200],
    ['workplace null instead of absent', { data: [{ ...job, workplace: null }], meta }, 200],
    ['meta without total', { data: [], meta: { page: 1, limit: 20, totalPages: 0 } }, 200],
    ['an error without error', { message: 'nope' }, 400],
    ['an undocumented success status', { data: [], meta }, 202],
  ])('refuses %s', (_label, body, status) => {
    expect(list(body, status)).toThrow(/docs\/openapi.json/);
  });

  test('refuses an answer through the gateway without a header the document requires; straight from the service, only its own', () => {
    const headers = {
      'x-kong-request-id': 'a'.repeat(32),
      'x-request-id': 'a'.repeat(32),
      'ratelimit-limit': '120',
      'ratelimit-remaining': '119',
      'ratelimit-reset': '30',
      'ratelimit-policy': '"minute";q=120;w=60',
      ratelimit: '"minute";r=119;t=30',
      etag: `"${'a'.repeat(43)}"`,
      'cache-control': 'private, no-cache',
    };
    const answer = (sent: Record<string, string>, direct?: boolean) => () =>
      validateResponse({
        method: 'GET',
        url: '/api/v1/jobs',
        status: 200,
        contentType: 'application/json',
        body: { data: [job], meta },
        text: '',
        headers: sent,
        direct,
      });
    expect(answer(headers, false)).not.toThrow();
    const { etag: _etag, ...withoutEtag } = headers;
    expect(answer(withoutEtag)).toThrow(/header ETag is required/);
    expect(answer(withoutEtag, true)).toThrow(/header ETag is required/);
    const { 'x-kong-request-id': _id, ...withoutId } = headers;
    expect(answer(withoutId, false)).toThrow(/header X-Kong-Request-Id is required/);
    expect(answer(withoutId)).not.toThrow();
  });

  test('refuses a 304 with a body and a success on an unknown path', () => {
    expect(() =>
      validateResponse({
        method: 'GET',
        url: '/api/v1/jobs',
        status: 304,
        contentType: null,
        body: undefined,
        text: 'x',
      }),
    ).toThrow();
    expect(list({ ok: true }, 200, 'GET', '/api/v1/candidates')).toThrow(/no operation/);
  });
});

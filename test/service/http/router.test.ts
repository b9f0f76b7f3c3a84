/**
 * The router applies what each route declares: a query, path or body its schemas refuse is the
 * route's declared 400 (404 for a path) before its handler runs, and the handler receives the
 * parsed input. Every route of ROUTES is mounted with its handler replaced by a recorder. How
 * mount() dispatches: HEAD as GET, parameters percent-decoded, each request counted under its
 * route's declared path, a method a path does not serve a 405 unless something downstream answers.
 */
import Koa from 'koa';
import type { Database } from '../../../db/client';
import { MESSAGES } from '../../../service/errors';
import { createLogger } from '../../../service/logger';
import { createMetrics } from '../../../service/metrics';
import { trustGateway } from '../../../service/middleware/gateway-trust';
import { requestOutcome } from '../../../service/middleware/request-outcome';
import { mount, routerOf } from '../../../service/http/router';
import { ROUTES } from '../../../service/api/routes';
import type { ApiRoute, ApiSettings } from '../../../service/api/settings';
import type { RouteInput } from '../../../service/http/route';
import { json, writer } from '../../helpers/consumers';
import { call, serve, type Served } from '../../helpers/http';

const received: Array<{ operationId: string; input: RouteInput }> = [];

// Handlers only record what reached them; none touches a database.
const recorded: ApiRoute[] = ROUTES.map((route) => ({
  ...route,
  handler: () => (ctx, input) => {
    received.push({ operationId: route.operationId, input });
    ctx.status = 204;
  },
}));

let served: Served;
const metrics = createMetrics();
beforeAll(async () => {
  const app = new Koa();
  app.use(requestOutcome(createLogger('silent'), metrics));
  app.use(trustGateway({}));
  app.use(mount(routerOf(recorded, { db: {} as Database, settings: {} as ApiSettings })));
  served = await serve(app.callback());
});
afterAll(() => served.close());
beforeEach(() => {
  received.length = 0;
});

const JOB_ID = '019A8F4E-7C21-7D3A-9B65-2F0C1E4D8A10';
// A path's parameter: a job id, or a mirror check's bucket.
const pathOf = (route: ApiRoute, id?: string) => route.path.replace(':id', id ?? JOB_ID).replace(':bucket', id ?? '0');
const request = (route: ApiRoute, query: string, id?: string, body?: string): [string, RequestInit] => [
  `${served.url}${pathOf(route, id)}${query}`,
  {
    method: route.method.toUpperCase(),
    headers: { ...writer, ...(body === undefined ? {} : json) },
    ...(body === undefined ? {} : { body }),
  },
];
// Refusals are the API's own answers, checked against the document; the recorder's 204 is not one.
const send = (...args: Parameters<typeof request>) => call(...request(...args));
const reach = async (...args: Parameters<typeof request>) =>
  expect((await fetch(...request(...args))).status).toBe(204);
const validBody = JSON.stringify({
  title: 'Router',
  department: 'Ops',
  type: 'contract',
  description: 'Checked once.',
});
const bodyFor = (route: ApiRoute) => (route.body ? validBody : undefined);

describe.each(ROUTES.filter((route) => route.query).map((route) => [route.operationId, route] as const))(
  '%s: its query',
  (_id, route) => {
    // A numeric parameter of the route's: limit where it has one, else the mirror check's buckets.
    const name = 'limit' in route.query!.parameters.shape ? 'limit' : 'buckets';
    test.each([
      ['an unknown parameter', '?no_such_parameter=1', /^Unknown query parameter "no_such_parameter"\. Allowed: /],
      [
        'a repeated parameter',
        `?${name}=1&${name}=2`,
        new RegExp(`^Query parameter "${name}" was given more than once; send one value`),
      ],
      ['a value its schema refuses', `?${name}=0`, new RegExp(`^${name} must be`)],
    ])('%s is the declared 400, and the handler never runs', async (_label, query, message) => {
      expect(route.responses['400']).toBeDefined();
      const res = await send(route, query, undefined, bodyFor(route));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
      expect(received).toEqual([]);
    });
  },
);

describe.each(ROUTES.filter((route) => route.params).map((route) => [route.operationId, route] as const))(
  '%s: its path',
  (_id, route) => {
    test('a parameter its schema refuses is the declared 404, and the handler never runs', async () => {
      expect(route.responses['404']).toBeDefined();
      const res = await send(route, '', 'not-a-uuid', bodyFor(route));
      expect(res.status).toBe(404);
      expect(res.body).toEqual(route.responses['404']!.example);
      expect(received).toEqual([]);
    });
  },
);

describe.each(ROUTES.filter((route) => route.body).map((route) => [route.operationId, route] as const))(
  '%s: its body',
  (_id, route) => {
    test('an unknown field is the declared 400 naming it, and the handler never runs', async () => {
      const res = await send(route, '', undefined, JSON.stringify({ no_such_field: 1 }));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(MESSAGES.validationFailed);
      expect(res.body.details).toEqual(
        expect.arrayContaining([{ field: 'no_such_field', message: 'no_such_field is not a known field' }]),
      );
      expect(received).toEqual([]);
    });
  },
);

describe.each(
  ROUTES.filter((route) => route.body && route.tag === 'jobs').map((route) => [route.operationId, route] as const),
)('%s: its body', (_id, route) => {
  test('a body its schema refuses is the declared 400 with every problem, and the handler never runs', async () => {
    expect(route.responses['400']).toBeDefined();
    const res = await send(route, '', undefined, JSON.stringify({ title: '', payRate: 10 }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(MESSAGES.validationFailed);
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        { field: 'payRate', message: 'payRate cannot be set through the API' },
        { field: 'title', message: 'title must not be empty' },
        { field: 'type', message: 'type is required' },
      ]),
    );
    expect(received).toEqual([]);
  });
});

test('each handler receives its input as its schemas parsed it', async () => {
  const byId = Object.fromEntries(ROUTES.map((route) => [route.operationId, route]));
  await reach(byId.listJobs!, '?limit=5&status=open,active&api_key=ignored');
  await reach(byId.listJobChanges!, '');
  await reach(byId.getJob!, '');
  await reach(byId.createJob!, '', undefined, validBody);
  expect(received.map(({ operationId }) => operationId)).toEqual(['listJobs', 'listJobChanges', 'getJob', 'createJob']);
  const [list, changes, get, create] = received.map(({ input }) => input);
  expect(list!.query).toEqual({ limit: 5, page: 1, status: ['open', 'active'] });
  expect(changes!.query).toEqual({ limit: 100 });
  expect(get!.params).toEqual({ id: JOB_ID });
  expect(create!.body).toMatchObject({ title: 'Router', status: 'draft', requirements: [], location: '' });
});

test('a method no route serves on a path is one 405 naming the methods that are', async () => {
  const res = await call(`${served.url}/api/v1/jobs/changes`, { method: 'DELETE', headers: writer });
  expect(res.status).toBe(405);
  expect(res.headers.get('allow')).toBe('HEAD, GET');
  expect(res.body).toEqual({ error: MESSAGES.methodNotAllowed });
  expect(received).toEqual([]);
});

describe('dispatch', () => {
  const getJob = ROUTES.find((route) => route.operationId === 'getJob')!;
  const counted = async (route: string, method: string, status: number) => {
    const line = (await metrics.registry.metrics())
      .split('\n')
      .find((entry) =>
        entry.startsWith(`http_requests_total{route="${route}",method="${method}",status="${status}"} `),
      );
    return line === undefined ? 0 : Number(line.split(' ')[1]);
  };

  test('HEAD is served by the GET route', async () => {
    const res = await fetch(`${served.url}${pathOf(getJob)}`, { method: 'HEAD', headers: writer });
    expect(res.status).toBe(204);
    expect(received.map(({ operationId, input }) => [operationId, input.params])).toEqual([['getJob', { id: JOB_ID }]]);
  });

  test('a path parameter reaches the handler percent-decoded; a malformed escape is kept as sent, which the schema refuses', async () => {
    await reach(getJob, '', JOB_ID.replace(/-/g, '%2D'));
    expect(received.map(({ input }) => input.params)).toEqual([{ id: JOB_ID }]);
    const malformed = await send(getJob, '', '%E0%A4%A');
    expect(malformed.status).toBe(404);
    expect(malformed.body).toEqual(getJob.responses['404']!.example);
  });

  test('a request is counted under its route as declared, a refusal by its schemas too; a 405 is unmatched', async () => {
    const before = {
      ok: await counted(getJob.path, 'GET', 204),
      refused: await counted(getJob.path, 'GET', 404),
      other: await counted('unmatched', 'PUT', 405),
    };
    await reach(getJob, '');
    await send(getJob, '', 'not-a-uuid');
    await call(`${served.url}${pathOf(getJob)}`, { method: 'PUT', headers: writer });
    expect(await counted(getJob.path, 'GET', 204)).toBe(before.ok + 1);
    expect(await counted(getJob.path, 'GET', 404)).toBe(before.refused + 1);
    expect(await counted('unmatched', 'PUT', 405)).toBe(before.other + 1);
  });

  test('OPTIONS and a method the router does not implement are the 405 too; OPTIONS on an unknown path is a 404', async () => {
    for (const method of ['OPTIONS', 'PROPFIND']) {
      const res = await call(`${served.url}/api/v1/jobs`, { method, headers: writer });
      expect([res.status, res.headers.get('allow'), res.body]).toEqual([
        405,
        'HEAD, GET, POST',
        { error: MESSAGES.methodNotAllowed },
      ]);
    }
    const unknown = await call(`${served.url}/api/v1/nowhere`, { method: 'OPTIONS', headers: writer });
    expect([unknown.status, unknown.headers.get('allow')]).toEqual([404, null]);
    expect(received).toEqual([]);
  });

  test('a path matched only under other methods goes on first: an answer downstream stands, and nothing downstream is the 405', async () => {
    const app = new Koa();
    app.use(requestOutcome(createLogger('silent')));
    app.use(trustGateway({}));
    app.use(
      mount(
        routerOf(
          recorded.filter((route) => ['getJob', 'createJob'].includes(route.operationId)),
          { db: {} as Database, settings: {} as ApiSettings },
        ),
      ),
    );
    app.use((ctx, next) => {
      if (ctx.method !== 'DELETE') return next();
      ctx.body = { answeredBy: 'downstream' };
    });
    const downstream = await serve(app.callback());
    try {
      const answered = await fetch(`${downstream.url}${pathOf(getJob)}`, { method: 'DELETE', headers: writer });
      expect([answered.status, answered.headers.get('allow'), await answered.json()]).toEqual([
        200,
        null,
        { answeredBy: 'downstream' },
      ]);
      const refused = await fetch(`${downstream.url}/api/v1/jobs`, { method: 'PUT', headers: writer });
      expect([refused.status, refused.headers.get('allow'), await refused.json()]).toEqual([
        405,
        'POST',
        { error: MESSAGES.methodNotAllowed },
      ]);
    } finally {
      await downstream.close();
    }
  });
});

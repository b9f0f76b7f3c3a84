import { createDatabase } from '../../db/client';
import { createApp } from '../../service/app';
import { createLogger } from '../../service/logger';
import { call, expectJsonError, serve, type Served } from '../helpers/http';
import { reader } from '../helpers/consumers';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { testServerAddress } from '../helpers/server';
import { pendingTimers } from '../helpers/timers';
import { memoryLog, sharedTestService } from '../helpers/service';
import { startRelay, type Relay } from '../faults/relay';

describe('paths and methods', () => {
  const service = sharedTestService({ name: 'errors_paths' });

  test('an unknown path is a JSON 404', async () => {
    for (const path of ['/api/v1/nope', '/api/v2/jobs', '/', '/api/v1/jobs/a/b']) {
      const res = await call(`${service.url}${path}`, { headers: reader });
      expectJsonError(res, 404, 'Not found');
    }
  });

  test('a known path with the wrong method is a 405 with Allow', async () => {
    const list = await call(`${service.url}/api/v1/jobs`, { method: 'DELETE', headers: reader });
    expectJsonError(list, 405, 'Method not allowed');
    expect(list.headers.get('allow')).toBe('HEAD, GET, POST');
    const one = await call(`${service.url}/api/v1/jobs/0190f5d8-0000-7000-8000-000000000000`, {
      method: 'PUT',
      headers: reader,
    });
    expect(one.status).toBe(405);
    expect(one.headers.get('allow')).toBe('HEAD, GET');
  });

  test('OPTIONS and unknown-to-the-router methods are 405 with Allow too, not 200 or 501', async () => {
    for (const method of ['OPTIONS', 'PROPFIND']) {
      const res = await call(`${service.url}/api/v1/jobs`, { method, headers: reader });
      expectJsonError(res, 405, 'Method not allowed');
      expect(res.headers.get('allow')).toBe('HEAD, GET, POST');
    }
    const probe = await call(`${service.url}/healthz`, { method: 'OPTIONS' });
    expect(probe.status).toBe(405);
    expect(probe.headers.get('allow')).toBe('HEAD, GET');
  });

  test('OPTIONS to a path no route knows is a 404, without Allow', async () => {
    for (const path of ['/nowhere', '/api/v1/nowhere']) {
      const res = await call(`${service.url}${path}`, { method: 'OPTIONS', headers: reader });
      expectJsonError(res, 404, 'Not found');
      expect(res.headers.get('allow')).toBeNull();
    }
  });

  test('health probes', async () => {
    expect(await call(`${service.url}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await call(`${service.url}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  test('a ready probe answered in time leaves no deadline timer behind (probes come every few seconds)', async () => {
    const before = pendingTimers();
    for (let i = 0; i < 20; i++) expect((await call(`${service.url}/readyz`)).status).toBe(200);
    // Each probe's 800 ms deadline would still be pending here; a few keep-alive timers may come and go.
    expect(pendingTimers() - before).toBeLessThan(5);
  });
});

describe('gateway secret', () => {
  let served: Served;
  const secret = 'a-gateway-secret-of-32-characters';
  // The pool points at a port nothing listens on: any query would fail with a 503, so a 401
  // proves the request was refused before the database was touched.
  const unreachable = createDatabase('mysql://root@127.0.0.1:9/jobs', { connectTimeoutMs: 500 });
  beforeAll(async () => {
    served = await serve(
      createApp({ db: unreachable.db, config: { gatewaySecret: secret }, logger: createLogger('silent') }).callback(),
    );
  });
  afterAll(async () => {
    await served.close();
    await unreachable.close();
  });

  test.each([
    ['no secret', {}],
    ['a wrong secret', { 'X-Gateway-Secret': 'guess' }],
    ['a secret with a matching prefix', { 'X-Gateway-Secret': secret.slice(0, -1) }],
  ])('%s: 401 before any query', async (_label, headers) => {
    const res = await call(`${served.url}/api/v1/jobs`, { headers: { ...reader, ...headers } });
    expectJsonError(res, 401, 'Requests must come through the API gateway');
  });

  test('the right secret gets through to the database (here: unreachable, so 503)', async () => {
    const res = await call(`${served.url}/api/v1/jobs`, { headers: { ...reader, 'X-Gateway-Secret': secret } });
    expect(res.status).toBe(503);
  });
});

describe('database outage', () => {
  let database: TestDatabase;
  let served: Served;
  let proxy: Relay;
  let viaProxy: ReturnType<typeof createDatabase>;
  const logs: string[] = [];

  beforeAll(async () => {
    database = await freshDatabase('errors_outage');
    proxy = await startRelay(testServerAddress());
    viaProxy = createDatabase(proxy.via(database.url), { connectTimeoutMs: 1000 });
    served = await serve(
      createApp({ db: viaProxy.db, config: {}, logger: createLogger('info', memoryLog(logs)) }).callback(),
    );
  });
  afterAll(async () => {
    await served.close();
    await viaProxy.close();
    await proxy.close();
    await database.close();
  });

  test('503 with Retry-After while the database is gone, and service resumes when it is back', async () => {
    expect((await call(`${served.url}/api/v1/jobs`, { headers: reader })).status).toBe(200);

    proxy.set('reset');
    for (const path of ['/api/v1/jobs', '/api/v1/jobs/0190f5d8-0000-7000-8000-000000000000', '/readyz']) {
      const res = await call(`${served.url}${path}`, { headers: reader });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.body).toEqual({ error: 'Service temporarily unavailable. Retry in a few seconds.' });
    }
    // The process is still serving what needs no database: a malformed id is a 404 without a query.
    expect((await call(`${served.url}/healthz`)).status).toBe(200);
    expect(await call(`${served.url}/api/v1/jobs/not-a-job-id`, { headers: reader })).toMatchObject({
      status: 404,
      body: { error: 'Job not found' },
    });

    proxy.set('forward');
    let status = 0;
    for (let attempt = 0; attempt < 5 && status !== 200; attempt++) {
      status = (await call(`${served.url}/api/v1/jobs`, { headers: reader })).status;
    }
    expect(status).toBe(200);
    // Logged as a failure, without driver messages (they quote SQL and values).
    expect(logs.some((line) => line.includes('"request failed"'))).toBe(true);
    expect(logs.join('\n')).not.toMatch(/select|from `jobs`/i);
  });

  test('READY_TIMEOUT_MS is how long /readyz waits for a silent database before its 503', async () => {
    const quick = await serve(
      createApp({ db: viaProxy.db, config: { readyTimeoutMs: 150 }, logger: createLogger('silent') }).callback(),
    );
    proxy.set('blackhole');
    try {
      const started = Date.now();
      const res = await call(`${quick.url}/readyz`);
      const ms = Date.now() - started;
      expect(res.status).toBe(503);
      expect(ms).toBeGreaterThanOrEqual(140);
      // Not the default 800 ms.
      expect(ms).toBeLessThan(700);
    } finally {
      proxy.set('forward');
      await quick.close();
    }
  });
});

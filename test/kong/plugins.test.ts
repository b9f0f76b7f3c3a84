/**
 * job-scopes in a real Kong 3.9 (DB-less, kong.yaml + demo.yaml) in front of a stub service that
 * records what reaches it: what the auth-cases table does not cover, i.e. the order of our plugins
 * among Kong's, configurations other than kong.yaml's (no secret, other groups, key-auth's
 * hide_credentials on) loaded through POST /config, and query strings the table does not hold.
 * auth-guard's counting and blocking are in auth-guard.test.ts. Every test uses client addresses
 * of its own (127.5.y.z), so auth-guard's per-IP counters never block one test for another's 401s.
 */
import { startRealKong, type DeclarativeConfig, type RealKong } from '../../harness/real-kong';
import { DEMO, send, stubUpstream, type StubUpstream } from '../local-gateway/support';
import type { Parsed } from '../helpers/parsed';

const SECRET = 'plugins-secret-0123456789';
const NO_GROUPS = 'demo-no-groups-4e9b2d71';
const MISSING = { error: 'Missing API key. Pass your key in the X-API-Key header.' };
let upstream: StubUpstream;
let kong: RealKong;

beforeAll(async () => {
  upstream = await stubUpstream();
  kong = await startRealKong({ serviceUrl: `http://127.0.0.1:${upstream.port}`, gatewaySecret: SECRET });
}, 120_000);
afterAll(async () => {
  await kong?.stop();
  await upstream?.close();
});

let client = 0;
/** A client address no other test used. */
const nextClient = () => `127.5.${Math.floor(++client / 250)}.${(client % 250) + 1}`;

const get = (
  headers: Record<string, string | string[]> = {},
  extra: { rawQuery?: string; query?: Record<string, string | string[]>; localAddress?: string } = {},
) => send(kong.proxyUrl, { path: '/api/v1/jobs', headers, localAddress: extra.localAddress ?? nextClient(), ...extra });

/** The one request the stub received while `act` ran (or none). */
async function forwarded(act: () => Promise<unknown>) {
  const before = upstream.received.length;
  await act();
  const got = upstream.received.slice(before);
  expect(got.length).toBeLessThanOrEqual(1);
  return got[0];
}

/** Runs `body` with kong.yaml + demo.yaml edited by `edit`, then loads them unedited again. */
async function withConfig(edit: (config: DeclarativeConfig) => void, body: () => Promise<void>): Promise<void> {
  await kong.configure({ edit });
  try {
    await body();
  } finally {
    await kong.configure({ edit: () => undefined });
  }
}

const plugins = (config: DeclarativeConfig, name: string) =>
  [
    ...config.plugins,
    ...config.services.flatMap((s: Parsed) => [
      ...(s.plugins ?? []),
      ...s.routes.flatMap((r: Parsed) => r.plugins ?? []),
    ]),
  ].filter((p: Parsed) => p.name === name);

describe("job-scopes among Kong's plugins", () => {
  test('it answers before request-size-limiting: an oversized POST with a read-only key is 403 Missing scope, not 413', async () => {
    const big = 'x'.repeat(101 * 1024);
    const res = await send(kong.proxyUrl, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.reader, 'Content-Type': 'application/json' },
      body: big,
      localAddress: nextClient(),
    });
    expect([res.status, res.json]).toEqual([403, { error: 'Missing scope jobs:write', requiredScope: 'jobs:write' }]);
    const writer = await send(kong.proxyUrl, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json' },
      body: big,
      localAddress: nextClient(),
    });
    expect(writer.status).toBe(413);
  });

  test("it answers before job-rate-limits: refused requests use none of the consumer's quota", async () => {
    await withConfig(
      (c) => {
        for (const p of plugins(c, 'job-rate-limits')) p.config.minute = 2;
      },
      async () => {
        for (let i = 0; i < 3; i++)
          expect(
            (
              await send(kong.proxyUrl, {
                method: 'POST',
                path: '/api/v1/jobs',
                headers: { 'X-API-Key': DEMO.reader },
                body: '{}',
              })
            ).status,
          ).toBe(403);
        expect((await get({ 'X-API-Key': DEMO.reader })).status).toBe(200);
        const second = await get({ 'X-API-Key': DEMO.reader });
        expect([second.status, second.headers['ratelimit-remaining']]).toEqual([200, '0']);
      },
    );
  });

  test('a consumer with no group is 403 Missing scope, and Kong logs no error for it', async () => {
    const res = await send(kong.proxyUrl, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': NO_GROUPS },
      body: '{}',
      localAddress: nextClient(),
    });
    expect([res.status, res.json]).toEqual([403, { error: 'Missing scope jobs:write', requiredScope: 'jobs:write' }]);
    expect(kong.logs().stderr).not.toMatch(/\[error\].*job-scopes/);
  });
});

describe('job-scopes configurations', () => {
  test("no secret configured: no X-Gateway-Secret upstream, and the client's forged one is dropped", async () => {
    await withConfig(
      (c) => {
        for (const p of plugins(c, 'job-scopes')) delete p.config.gateway_secret;
      },
      async () => {
        const got = await forwarded(() => get({ 'X-API-Key': DEMO.reader, 'X-Gateway-Secret': 'forged' }));
        expect(got?.headers['x-gateway-secret']).toBeUndefined();
        expect(got?.headers['x-consumer-groups']).toBe('jobs:read');
      },
    );
  });

  test("only jobs:* groups are forwarded, sorted, in the ACL plugin's format", async () => {
    await withConfig(
      (c) => {
        c.consumers.find((x: Parsed) => x.username === 'demo-writer').acls = [
          { group: 'partners' },
          { group: 'jobs:write' },
          { group: 'jobs:read' },
        ];
      },
      async () => {
        const got = await forwarded(() =>
          send(kong.proxyUrl, {
            method: 'POST',
            path: '/api/v1/jobs',
            headers: { 'X-API-Key': DEMO.writer },
            body: '{}',
          }),
        );
        expect(got?.headers['x-consumer-groups']).toBe('jobs:read, jobs:write');
      },
    );
  });

  test("key-auth's hide_credentials must stay off: with it on, an unknown key reads as a missing one; keys are stripped either way", async () => {
    await withConfig(
      (c) => {
        for (const p of plugins(c, 'key-auth')) p.config.hide_credentials = true;
      },
      async () => {
        const unknown = await get({ 'X-API-Key': 'demo-unknown-key' });
        expect([unknown.status, unknown.json]).toEqual([401, MISSING]);
        const got = await forwarded(() => get({ 'X-API-Key': DEMO.reader }, { query: { api_key: DEMO.writer } }));
        expect(got?.headers['x-api-key']).toBeUndefined();
        // key-auth's own removal leaves an empty query behind it ("?"); the key is gone all the same.
        expect(got?.url).toMatch(/^\/api\/v1\/jobs\??$/);
      },
    );
    expect((await get({ 'X-API-Key': 'demo-unknown-key' })).json).toEqual({ error: 'Invalid API key' });
  });
});

describe('the query string the service receives', () => {
  test('without a key in it, exactly as sent (no re-encoding)', async () => {
    const got = await forwarded(() =>
      get({ 'X-API-Key': DEMO.reader }, { rawQuery: 'department=Data%20Science&type=contract,full-time&q=%7e+x' }),
    );
    expect(got?.url).toBe('/api/v1/jobs?department=Data%20Science&type=contract,full-time&q=%7e+x');
  });

  test('every key name is stripped from it even when the key came in a header; the rest stays in order', async () => {
    const got = await forwarded(() =>
      get(
        { 'X-API-Key': DEMO.reader },
        { rawQuery: `page=2&api_key=${DEMO.writer}&status=active&X-API-Key=${DEMO.writer}&limit=5` },
      ),
    );
    expect(got?.url).toBe('/api/v1/jobs?page=2&status=active&limit=5');
  });

  test('a key after the 100th argument is stripped too', async () => {
    const many = Array.from({ length: 100 }, (_, i) => `f${i + 1}=x`).join('&');
    const got = await forwarded(() =>
      get({ 'X-API-Key': DEMO.reader }, { rawQuery: `${many}&api_key=${DEMO.writer}` }),
    );
    expect(got?.url).not.toContain('api_key');
    expect(got?.url).toContain('f100=x');
  });

  test('a bare ?api_key (no value) is no key, and is stripped when a header key is used', async () => {
    const bare = await get({}, { rawQuery: 'api_key&page=1' });
    expect([bare.status, bare.json]).toEqual([401, MISSING]);
    const got = await forwarded(() => get({ 'X-API-Key': DEMO.reader }, { rawQuery: 'api_key&page=1' }));
    expect(got?.url).toBe('/api/v1/jobs?page=1');
  });

  test('api_key sent twice is a duplicate: 401 Invalid API key, nothing forwarded', async () => {
    const got = await forwarded(async () => {
      const res = await get(
        {},
        { rawQuery: `page=2&api_key=${DEMO.reader}&status=active&api_key=${DEMO.writer}&limit=5` },
      );
      expect([res.status, res.json]).toEqual([401, { error: 'Invalid API key' }]);
    });
    expect(got).toBeUndefined();
  });
});

describe("what operators read on Kong's /metrics", () => {
  test("the gateway's own 401, 403 and 429 are counted per route with their latencies, and no partner is named", async () => {
    await withConfig(
      (c) => {
        for (const p of plugins(c, 'job-rate-limits')) p.config.minute = 1;
      },
      async () => {
        expect((await get()).status).toBe(401);
        expect(
          (
            await send(kong.proxyUrl, {
              method: 'POST',
              path: '/api/v1/jobs',
              headers: { 'X-API-Key': DEMO.reader },
              body: '{}',
              localAddress: nextClient(),
            })
          ).status,
        ).toBe(403);
        expect((await get({ 'X-API-Key': DEMO.writer2 })).status).toBe(200);
        expect((await get({ 'X-API-Key': DEMO.writer2 })).status).toBe(429);
      },
    );
    const metrics = await (await fetch(`${kong.statusUrl}/metrics`)).text();
    for (const [route, code] of [
      ['jobs-read', '401'],
      ['jobs-write', '403'],
      ['jobs-read', '429'],
    ]) {
      expect([route, code, metrics]).toEqual([
        route,
        code,
        expect.stringMatching(
          new RegExp(
            `kong_jobs_http_requests_total\\{service="jobs-service",route="${route}",code="${code}",source="kong"\\} [1-9]`,
          ),
        ),
      ]);
    }
    expect(metrics).toMatch(
      /kong_jobs_http_requests_total\{service="jobs-service",route="jobs-read",code="200",source="service"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /kong_jobs_request_latency_ms_bucket\{service="jobs-service",route="jobs-read",le="\+Inf"\} [1-9]/,
    );
    expect(metrics).toMatch(/kong_jobs_upstream_latency_ms_count\{service="jobs-service",route="jobs-read"\} [1-9]/);
    expect(metrics).not.toMatch(/demo-(reader|writer)/);
  });
});

/**
 * What partners and the service see of authentication at the local gateway that a mutation run
 * (issue 12) showed no test pinned.
 * - kong.yaml + demo.yaml: the gateway's own 401/403 answers are JSON with Kong's Content-Type
 *   (kong.response.exit with a table body: kong/pdk/response.lua, CONTENT_TYPE_JSON), and every
 *   spelling of the key header, `X_API_Key` included, is stripped before the service sees it
 *   (gateway/plugins/job-scopes/handler.lua).
 * - key-auth on its own, as Kong 3.9.1 runs it (kong/plugins/key-auth/handler.lua, schema.lua):
 *   its three 401s, WWW-Authenticate with and without a realm, the search order (key names in order;
 *   per name the header, then the query), key_in_header / key_in_query / hide_credentials /
 *   run_on_preflight, the consumer headers set and cleared (set_consumer), and `anonymous`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { stringify } from 'yaml';
import { startLocalGateway } from '../../gateway/local';
import {
  DEMO,
  gatewayEnv,
  gatewayOverStub,
  send,
  startGateway,
  stubUpstream,
  type QueryInput,
  type StubUpstream,
  type TestGateway,
} from './support';

const JSON_TYPE = 'application/json; charset=utf-8';

describe("kong.yaml: the gateway's own answers and the key header's spellings", () => {
  const fx = gatewayOverStub();

  test.each([
    ['no key', {}, 401, { error: 'Missing API key. Pass your key in the X-API-Key header.' }],
    ['an unknown key', { 'X-API-Key': 'demo-nobody-00000000' }, 401, { error: 'Invalid API key' }],
    ['a disabled key', { 'X-API-Key': DEMO.disabled }, 403, { error: 'API key disabled' }],
  ])('%s: answered as JSON with Content-Type application/json; charset=utf-8', async (_label, headers, status, body) => {
    const before = fx.upstream.received.length;
    const res = await send(fx.gateway.url, { path: '/api/v1/jobs', headers });
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(res.json).toEqual(body);
    expect(fx.upstream.received.length).toBe(before);
  });

  test('a missing scope: 403 JSON naming the scope, same Content-Type', async () => {
    const res = await send(fx.gateway.url, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.reader, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(res.json).toEqual({ error: 'Missing scope jobs:write', requiredScope: 'jobs:write' });
  });

  test('X_API_Key, api-key and API_KEY never reach the service, beside a valid X-API-Key', async () => {
    // nginx passes headers with underscores (Kong sets underscores_in_headers on), and a client
    // that sends its key under two spellings must not leak either one to the service.
    const res = await send(fx.gateway.url, {
      path: '/api/v1/jobs',
      query: { status: 'open' },
      headers: { 'X-API-Key': DEMO.reader, X_API_Key: DEMO.writer, 'api-key': DEMO.writer2, API_KEY: DEMO.disabled },
    });
    expect(res.status).toBe(200);
    const got = fx.upstream.received.at(-1)!;
    expect(got.url).toBe('/api/v1/jobs?status=open');
    const names = Object.keys(got.headers);
    for (const name of ['x-api-key', 'x_api_key', 'api-key', 'api_key']) expect(names).not.toContain(name);
    const raw = got.rawHeaders.join('\n');
    for (const key of Object.values(DEMO)) expect(raw).not.toContain(key);
  });

  test('X_API_Key alone is not a key: 401 missing, and nothing reaches the service', async () => {
    // ngx.req.get_headers() keeps "x_api_key" as sent; a lookup of X-API-Key never finds it.
    const before = fx.upstream.received.length;
    const res = await send(fx.gateway.url, { path: '/api/v1/jobs', headers: { X_API_Key: DEMO.reader } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: 'Missing API key. Pass your key in the X-API-Key header.' });
    expect(fx.upstream.received.length).toBe(before);
  });
});

/* ---------- key-auth on its own ---------- */

const CONSUMERS = [
  {
    username: 'alice',
    id: '11111111-1111-4111-8111-111111111111',
    custom_id: 'alice-co',
    keyauth_credentials: [{ id: 'aaaaaaaa-0000-4000-8000-000000000001', key: 'alice-key' }],
  },
  {
    // No custom_id: the header must be cleared, not forwarded from the client.
    username: 'bob',
    id: '22222222-2222-4222-8222-222222222222',
    keyauth_credentials: [{ id: 'bbbbbbbb-0000-4000-8000-000000000002', key: 'bob-key' }],
  },
  { username: 'guest', id: '33333333-3333-4333-8333-333333333333' },
];

/** One route per key-auth configuration, all proxied to the stub. */
function keyAuthState(upstreamPort: number) {
  const route = (name: string, config: Record<string, unknown>) => ({
    name,
    paths: [`/${name}`],
    strip_path: false,
    plugins: [{ name: 'key-auth', config }],
  });
  return {
    _format_version: '3.0',
    services: [
      {
        name: 'stub',
        url: `http://127.0.0.1:${upstreamPort}`,
        routes: [
          route('defaults', {}),
          route('names', { key_names: ['apikey', 'X-Alt-Key'] }),
          route('realm', { realm: 'jobs' }),
          route('header-only', { key_in_query: false }),
          route('query-only', { key_in_header: false }),
          route('hidden', { hide_credentials: true }),
          route('no-preflight', { run_on_preflight: false }),
          route('anonymous', { anonymous: 'guest' }),
          route('anonymous-gone', { anonymous: 'nobody' }),
        ],
      },
    ],
    consumers: CONSUMERS,
  };
}

describe('key-auth (kong/plugins/key-auth/handler.lua, Kong 3.9.1)', () => {
  let upstream: StubUpstream;
  let gateway: TestGateway;
  let dir: string;
  beforeAll(async () => {
    upstream = await stubUpstream();
    dir = mkdtempSync(path.join(os.tmpdir(), 'key-auth-'));
    const file = path.join(dir, 'kong.yaml');
    writeFileSync(file, stringify(keyAuthState(upstream.port)));
    gateway = await startGateway(file, gatewayEnv(undefined));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function request(route: string, opts: { query?: QueryInput; headers?: Record<string, string | string[]>; method?: string } = {}) {
    const before = upstream.received.length;
    const res = await send(gateway.url, { path: `/${route}`, ...opts });
    return { res, upstream: upstream.received.length > before ? upstream.received.at(-1)! : undefined };
  }

  /** A refusal by key-auth itself: kong.response.error through the JSON error template. */
  function expectRefused(r: Awaited<ReturnType<typeof request>>, message: string, wwwAuthenticate = 'Key') {
    expect(r.res.status).toBe(401);
    expect(r.res.headers['content-type']).toBe(JSON_TYPE);
    expect(r.res.json).toEqual({ error: message, request_id: expect.any(String) });
    expect(r.res.headers['www-authenticate']).toBe(wwwAuthenticate);
    expect(r.upstream).toBeUndefined();
  }

  describe('the three 401s', () => {
    test('no key', async () => expectRefused(await request('defaults'), 'No API key found in request'));
    test('an empty key is no key', async () => expectRefused(await request('defaults', { headers: { apikey: '' } }), 'No API key found in request'));
    test('an empty query key is no key', async () => expectRefused(await request('defaults', { query: { apikey: '' } }), 'No API key found in request'));
    test('a bare ?apikey (no "=") is not a string and is skipped', async () => {
      const res = await send(gateway.url, { path: '/defaults?apikey' });
      expect(res.status).toBe(401);
      expect(res.json.error).toBe('No API key found in request');
    });
    test('an unknown key', async () => expectRefused(await request('defaults', { headers: { apikey: 'mallory-key' } }), 'Unauthorized'));
    test('the header sent twice', async () =>
      expectRefused(await request('defaults', { headers: { apikey: ['alice-key', 'bob-key'] } }), 'Duplicate API key found'));
    test('the query argument sent twice', async () =>
      expectRefused(await request('defaults', { query: { apikey: ['alice-key', 'alice-key'] } }), 'Duplicate API key found'));
    test('with a realm configured, WWW-Authenticate names it', async () => {
      expectRefused(await request('realm'), 'No API key found in request', 'Key realm="jobs"');
      expectRefused(await request('realm', { headers: { apikey: 'nope' } }), 'Unauthorized', 'Key realm="jobs"');
      expectRefused(await request('realm', { headers: { apikey: ['a', 'b'] } }), 'Duplicate API key found', 'Key realm="jobs"');
    });
  });

  describe('where the key is looked for', () => {
    test('the header name is case-insensitive', async () => {
      expect((await request('defaults', { headers: { APIKEY: 'alice-key' } })).res.status).toBe(200);
    });

    test('the query argument', async () => {
      const { res, upstream: got } = await request('defaults', { query: { apikey: 'alice-key', page: '2' } });
      expect(res.status).toBe(200);
      // hide_credentials is off by default: the service sees the request as sent.
      expect(got!.url).toBe('/defaults?apikey=alice-key&page=2');
    });

    test('for one name, the header wins over the query', async () => {
      const { upstream: got } = await request('defaults', { headers: { apikey: 'bob-key' }, query: { apikey: 'alice-key' } });
      expect(got!.headers['x-consumer-username']).toBe('bob');
    });

    test('key names are tried in order; a later name is used when the first is absent', async () => {
      const second = await request('names', { headers: { 'X-Alt-Key': 'bob-key' } });
      expect(second.upstream!.headers['x-consumer-username']).toBe('bob');
      const both = await request('names', { headers: { 'X-Alt-Key': 'bob-key' }, query: { apikey: 'alice-key' } });
      expect(both.upstream!.headers['x-consumer-username']).toBe('alice');
    });

    test('key_in_query: false ignores the query', async () => {
      expectRefused(await request('header-only', { query: { apikey: 'alice-key' } }), 'No API key found in request');
      expect((await request('header-only', { headers: { apikey: 'alice-key' } })).res.status).toBe(200);
    });

    test('key_in_header: false ignores the header', async () => {
      expectRefused(await request('query-only', { headers: { apikey: 'alice-key' } }), 'No API key found in request');
      expect((await request('query-only', { query: { apikey: 'alice-key' } })).res.status).toBe(200);
    });
  });

  describe('what the service receives', () => {
    test('the consumer and credential headers replace whatever the client sent', async () => {
      const { upstream: got } = await request('defaults', {
        headers: {
          apikey: 'alice-key',
          'X-Consumer-ID': 'forged',
          'X-Consumer-Username': 'forged',
          'X-Consumer-Custom-ID': 'forged',
          'X-Credential-Identifier': 'forged',
          'X-Anonymous-Consumer': 'true',
        },
      });
      expect(got!.headers).toMatchObject({
        'x-consumer-id': '11111111-1111-4111-8111-111111111111',
        'x-consumer-username': 'alice',
        'x-consumer-custom-id': 'alice-co',
        'x-credential-identifier': 'aaaaaaaa-0000-4000-8000-000000000001',
        apikey: 'alice-key',
      });
      expect(got!.headers).not.toHaveProperty('x-anonymous-consumer');
    });

    test("a consumer without custom_id: the client's X-Consumer-Custom-ID is cleared", async () => {
      const { upstream: got } = await request('defaults', { headers: { apikey: 'bob-key', 'X-Consumer-Custom-ID': 'forged' } });
      expect(got!.headers['x-consumer-id']).toBe('22222222-2222-4222-8222-222222222222');
      expect(got!.headers).not.toHaveProperty('x-consumer-custom-id');
    });

    test('hide_credentials: the key is removed from the header and the query, the rest kept', async () => {
      const viaHeader = await request('hidden', { headers: { apikey: 'alice-key', 'X-Other': 'kept' } });
      expect(viaHeader.res.status).toBe(200);
      expect(viaHeader.upstream!.headers).not.toHaveProperty('apikey');
      expect(viaHeader.upstream!.headers['x-other']).toBe('kept');
      const viaQuery = await request('hidden', { query: { page: '2', apikey: 'alice-key', limit: '5' } });
      expect(viaQuery.upstream!.url).toBe('/hidden?page=2&limit=5');
      expect(viaQuery.upstream!.headers['x-consumer-username']).toBe('alice');
    });

    test('hide_credentials is off by default: the header is forwarded as sent', async () => {
      const { upstream: got } = await request('defaults', { headers: { apikey: 'alice-key' } });
      expect(got!.headers.apikey).toBe('alice-key');
    });
  });

  describe('preflight and anonymous', () => {
    test('run_on_preflight: false lets OPTIONS through without a key, and without consumer headers', async () => {
      const { res, upstream: got } = await request('no-preflight', { method: 'OPTIONS', headers: { 'X-Consumer-ID': 'forged-by-client' } });
      expect(res.status).toBe(200);
      expect(got!.method).toBe('OPTIONS');
      expect(got!.headers).not.toHaveProperty('x-anonymous-consumer');
      expect(got!.headers).not.toHaveProperty('x-credential-identifier');
    });

    test('run_on_preflight: false still authenticates every other method', async () => {
      expectRefused(await request('no-preflight'), 'No API key found in request');
    });

    test('OPTIONS needs a key by default', async () => {
      expectRefused(await request('defaults', { method: 'OPTIONS' }), 'No API key found in request');
    });

    test.each([
      ['no key', {}],
      ['an unknown key', { apikey: 'mallory-key' }],
      ['a duplicate key', { apikey: ['alice-key', 'bob-key'] }],
    ])('anonymous: %s goes through as the anonymous consumer, marked anonymous, no credential', async (_label, headers) => {
      const { res, upstream: got } = await request('anonymous', { headers: { ...headers, 'X-Credential-Identifier': 'forged' } });
      expect(res.status).toBe(200);
      expect(got!.headers).toMatchObject({
        'x-consumer-id': '33333333-3333-4333-8333-333333333333',
        'x-consumer-username': 'guest',
        'x-anonymous-consumer': 'true',
      });
      expect(got!.headers).not.toHaveProperty('x-credential-identifier');
      expect(got!.headers).not.toHaveProperty('x-consumer-custom-id');
    });

    test('anonymous: a valid key is that consumer, not anonymous', async () => {
      const { upstream: got } = await request('anonymous', { headers: { apikey: 'alice-key' } });
      expect(got!.headers['x-consumer-username']).toBe('alice');
      expect(got!.headers).not.toHaveProperty('x-anonymous-consumer');
    });

    test('anonymous naming a consumer that does not exist: 500, and nothing reaches the service', async () => {
      // Kong 3.9.1: load_consumer finds nothing, kong.client.authenticate(nil, nil) raises (kong/pdk/client.lua).
      const { res, upstream: got } = await request('anonymous-gone');
      expect(res.status).toBe(500);
      expect(got).toBeUndefined();
    });
  });
});

describe('key-auth configurations the local gateway refuses to load', () => {
  // Reading the key from the body is not reproduced: refusing the file beats ignoring the setting.
  test('key_in_body: true', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'key-auth-refused-'));
    try {
      const file = path.join(dir, 'kong.yaml');
      writeFileSync(
        file,
        stringify({
          _format_version: '3.0',
          services: [{ name: 's', url: 'http://127.0.0.1:9', routes: [{ name: 'r', paths: ['/r'], strip_path: false, plugins: [{ name: 'key-auth', config: { key_in_body: true } }] }] }],
        }),
      );
      await expect(startLocalGateway({ configPath: file, port: 0, host: '127.0.0.1', env: gatewayEnv(undefined), logger: pino({ level: 'silent' }) })).rejects.toThrow(
        'key_in_body: true is not reproduced by the local gateway',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

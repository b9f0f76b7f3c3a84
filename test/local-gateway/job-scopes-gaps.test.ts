/**
 * job-scopes at the local gateway, where a mutation run (issue 12) found no test: the
 * X-Consumer-Groups value the service receives, a client's X-Gateway-Secret when none is
 * configured, the plugin's own key_names, and the configurations its schema refuses
 * (gateway/plugins/job-scopes/handler.lua and schema.lua are the reference).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { stringify } from 'yaml';
import { startLocalGateway } from '../../gateway/local';
import { gatewayEnv, send, startGateway, stubUpstream, type StubUpstream, type TestGateway } from './support';

const CONSUMERS = [
  { username: 'anonymous', id: '00000000-0000-4000-8000-000000000000' },
  {
    username: 'multi',
    id: '44444444-4444-4444-8444-444444444444',
    keyauth_credentials: [{ key: 'multi-key' }],
    // Out of order, and with groups that are not scopes (another plugin's, a tier).
    acls: [{ group: 'jobs:write' }, { group: 'partner-tier-gold' }, { group: 'jobs:read' }, { group: 'beta' }],
  },
  { username: 'reader', id: '55555555-5555-4555-8555-555555555555', keyauth_credentials: [{ key: 'reader-key' }], acls: [{ group: 'jobs:read' }] },
];

/** key-auth with `anonymous` (as in kong.yaml) and job-scopes, per route. */
function state(upstreamPort: number) {
  const route = (name: string, keyNames: string[], scopes: Record<string, unknown>) => ({
    name,
    paths: [`/${name}`],
    strip_path: false,
    plugins: [
      { name: 'key-auth', config: { key_names: keyNames, anonymous: 'anonymous' } },
      { name: 'job-scopes', config: { required_scope: 'jobs:read', ...scopes } },
    ],
  });
  return {
    _format_version: '3.0',
    services: [
      {
        name: 'stub',
        url: `http://127.0.0.1:${upstreamPort}`,
        routes: [
          route('no-secret', ['X-API-Key', 'api_key'], {}),
          route('empty-secret', ['X-API-Key', 'api_key'], { gateway_secret: '' }),
          route('with-secret', ['X-API-Key', 'api_key'], { gateway_secret: 'the-gateway-secret' }),
          route('partner-key', ['X-Partner-Key'], { key_names: ['X-Partner-Key'] }),
        ],
      },
    ],
    consumers: CONSUMERS,
  };
}

describe('job-scopes (gateway/plugins/job-scopes/handler.lua)', () => {
  let upstream: StubUpstream;
  let gateway: TestGateway;
  let dir: string;
  beforeAll(async () => {
    upstream = await stubUpstream();
    dir = mkdtempSync(path.join(os.tmpdir(), 'job-scopes-'));
    const file = path.join(dir, 'kong.yaml');
    writeFileSync(file, stringify(state(upstream.port)));
    gateway = await startGateway(file, gatewayEnv(undefined));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function forwarded(route: string, headers: Record<string, string>) {
    const before = upstream.received.length;
    const res = await send(gateway.url, { path: `/${route}`, headers });
    expect(res.status).toBe(200);
    expect(upstream.received.length).toBe(before + 1);
    return upstream.received.at(-1)!.headers;
  }

  test("X-Consumer-Groups holds only the consumer's jobs:* groups, sorted, joined by ', '", async () => {
    const headers = await forwarded('no-secret', { 'X-API-Key': 'multi-key', 'X-Consumer-Groups': 'jobs:admin' });
    expect(headers['x-consumer-groups']).toBe('jobs:read, jobs:write');
  });

  test('a single scope is the whole value', async () => {
    expect((await forwarded('no-secret', { 'X-API-Key': 'reader-key' }))['x-consumer-groups']).toBe('jobs:read');
  });

  test.each(['no-secret', 'empty-secret'])(
    "route %s (no secret, or an empty one): a client's X-Gateway-Secret never reaches the service",
    async (route) => {
      const headers = await forwarded(route, { 'X-API-Key': 'reader-key', 'X-Gateway-Secret': 'forged-by-client' });
      expect(headers).not.toHaveProperty('x-gateway-secret');
    },
  );

  test('with a secret configured, the service gets that secret, not the client one', async () => {
    const headers = await forwarded('with-secret', { 'X-API-Key': 'reader-key', 'X-Gateway-Secret': 'forged-by-client' });
    expect(headers['x-gateway-secret']).toBe('the-gateway-secret');
  });

  describe('its own key_names', () => {
    test('the configured name carries the key, and every spelling of it is stripped', async () => {
      const headers = await forwarded('partner-key', { 'X-Partner-Key': 'reader-key', X_Partner_Key: 'multi-key' });
      expect(headers['x-consumer-username']).toBe('reader');
      expect(headers).not.toHaveProperty('x-partner-key');
      expect(headers).not.toHaveProperty('x_partner_key');
    });

    test('no key under the configured name is a missing key, whatever X-API-Key holds', async () => {
      const before = upstream.received.length;
      const res = await send(gateway.url, { path: '/partner-key', headers: { 'X-API-Key': 'reader-key' } });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: 'Missing API key. Pass your key in the X-API-Key header.' });
      expect(upstream.received.length).toBe(before);
    });

    test('an unknown key under the configured name is an invalid key', async () => {
      const res = await send(gateway.url, { path: '/partner-key', headers: { 'X-Partner-Key': 'nobody-key' } });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: 'Invalid API key' });
    });
  });
});

describe('job-scopes configurations refused at load (schema.lua)', () => {
  async function load(config: Record<string, unknown>) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'job-scopes-refused-'));
    const file = path.join(dir, 'kong.yaml');
    writeFileSync(
      file,
      stringify({
        _format_version: '3.0',
        services: [
          { name: 's', url: 'http://127.0.0.1:9', routes: [{ name: 'r', paths: ['/r'], strip_path: false, plugins: [{ name: 'job-scopes', config }] }] },
        ],
      }),
    );
    try {
      return await startLocalGateway({ configPath: file, port: 0, host: '127.0.0.1', env: gatewayEnv(undefined), logger: pino({ level: 'silent' }) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test('key_names: [] (len_min = 1)', async () => {
    await expect(load({ required_scope: 'jobs:read', key_names: [] })).rejects.toThrow('key_names: at least one name is required');
  });

  test('a required_scope other than jobs:read and jobs:write (one_of)', async () => {
    await expect(load({ required_scope: 'jobs:admin' })).rejects.toThrow(
      'required_scope: "jobs:admin" is not allowed (supported: jobs:read, jobs:write)',
    );
  });

  test('no required_scope (required = true)', async () => {
    await expect(load({})).rejects.toThrow('required_scope: null is not allowed (supported: jobs:read, jobs:write)');
  });
});

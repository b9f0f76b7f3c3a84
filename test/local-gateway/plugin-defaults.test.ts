/**
 * Defaults and edges of the local gateway's key-auth and request-size-limiting, and of the option
 * readers every plugin uses (gateway/local/plugins/definition.ts), that the 2026-11-22 mutation
 * run left unpinned: what a partner or the service sees when an
 * option is left out or given as YAML null, and the text an operator reads when a value is refused.
 *
 * Every configuration here is loaded inside its test (plugin-stack.ts says why).
 */
import http from 'node:http';
import { loadError, withGateway, type Plugin } from './plugin-stack';
import type { RawResponse } from './support';

const JSON_TYPE = 'application/json; charset=utf-8';
const MIB = 2 ** 20;

const AT = 'services[0].routes[0].plugins[0]';

/**
 * A POST whose head announces `length` bytes and `Expect: 100-continue`, its body withheld:
 * '100 Continue' when the gateway invites the body (it will read it), or the answer it sent instead.
 */
function announce(url: string, length: number, expect = '100-continue'): Promise<'100 Continue' | RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method: 'POST', path: '/r', agent: false, headers: { 'Content-Length': String(length), Expect: expect } });
    req.on('continue', () => {
      resolve('100 Continue');
      req.destroy();
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: text ? JSON.parse(text) : undefined });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

/* ---------- key-auth ---------- */

describe("key-auth with no options: Kong 3.9.1's defaults (kong/plugins/key-auth/schema.lua)", () => {
  const keyAuth = (config: Record<string, unknown> = {}): Plugin[] => [{ name: 'key-auth', config }];

  test('a key in the `apikey` header is accepted, and the service receives that header as sent (hide_credentials false)', async () => {
    await withGateway(keyAuth(), async ({ request }) => {
      const { res, proxied } = await request({ headers: { apikey: 'alice-key' } });
      expect(res.status).toBe(200);
      expect(proxied!.headers).toMatchObject({ apikey: 'alice-key', 'x-consumer-username': 'alice' });
    });
  });

  test('a key in ?apikey= is accepted, and the service receives the query as sent', async () => {
    await withGateway(keyAuth(), async ({ request }) => {
      const { res, proxied } = await request({ query: { apikey: 'alice-key', page: '2' } });
      expect(res.status).toBe(200);
      expect(proxied!.url).toBe('/r?apikey=alice-key&page=2');
      expect(proxied!.headers['x-consumer-username']).toBe('alice');
    });
  });

  test('an OPTIONS preflight without a key is refused 401 (run_on_preflight true)', async () => {
    await withGateway(keyAuth(), async ({ request }) => {
      const { res, proxied } = await request({ method: 'OPTIONS' });
      expect(res.status).toBe(401);
      expect(proxied).toBeUndefined();
    });
  });

  test('no key: 401 "No API key found in request" with WWW-Authenticate: Key (no realm), not an anonymous pass', async () => {
    await withGateway(keyAuth(), async ({ request }) => {
      const { res, proxied } = await request();
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(res.json).toEqual({ error: 'No API key found in request', request_id: expect.any(String) });
      expect(res.headers['www-authenticate']).toBe('Key');
      expect(proxied).toBeUndefined();
    });
  });

  test('anonymous naming a consumer that does not exist: Kong 3.9.1\'s generic 500, and nothing reaches the service', async () => {
    // kong/plugins/key-auth/handler.lua (3.9.1) set_anonymous_consumer: kong.client.authenticate(nil, nil)
    // raises (kong/pdk/client.lua); the "is configured but doesn't exist" text came after 3.9.1.
    await withGateway(keyAuth({ anonymous: 'nobody' }), async ({ request }) => {
      const { res, proxied } = await request();
      expect(res.status).toBe(500);
      expect(res.json).toEqual({ error: 'An unexpected error occurred', request_id: expect.any(String) });
      expect(proxied).toBeUndefined();
    });
  });
});

describe('key-auth options an operator turns off', () => {
  const keyAuth = (config: Record<string, unknown>): Plugin[] => [{ name: 'key-auth', config }];

  test('key_in_header: false: a key sent only as a header is not looked at (401 No API key found)', async () => {
    await withGateway(keyAuth({ key_in_header: false }), async ({ request }) => {
      const { res, proxied } = await request({ headers: { apikey: 'alice-key' } });
      expect(res.status).toBe(401);
      expect(res.json).toMatchObject({ error: 'No API key found in request' });
      expect(proxied).toBeUndefined();
    });
  });

  test('key_in_query: false: a key sent only in the query is not looked at (401 No API key found)', async () => {
    await withGateway(keyAuth({ key_in_query: false }), async ({ request }) => {
      const { res, proxied } = await request({ query: { apikey: 'alice-key' } });
      expect(res.status).toBe(401);
      expect(res.json).toMatchObject({ error: 'No API key found in request' });
      expect(proxied).toBeUndefined();
    });
  });

  test('run_on_preflight: false: an OPTIONS preflight without a key goes through to the service', async () => {
    await withGateway(keyAuth({ run_on_preflight: false }), async ({ request }) => {
      const { res, proxied } = await request({ method: 'OPTIONS' });
      expect(res.status).toBe(200);
      expect(proxied!.method).toBe('OPTIONS');
    });
  });
});

describe('key-auth configurations refused at load, with the text the operator reads', () => {
  test.each([
    [{ key_names: [] }, `${AT} (key-auth).config.key_names: at least one name is required`],
    [{ key_in_body: true }, `${AT} (key-auth).config.key_in_body: true is not reproduced by the local gateway`],
    [{ key_names: 'apikey' }, `${AT} (key-auth).config.key_names: expected an array of strings`],
    [{ key_names: ['apikey', 42] }, `${AT} (key-auth).config.key_names: expected an array of strings`],
    [{ hide_credentials: 'yes' }, `${AT} (key-auth).config.hide_credentials: expected a boolean`],
    [{ realm: 42 }, `${AT} (key-auth).config.realm: expected a string`],
  ])('%j', (config, message) => {
    expect(loadError([{ name: 'key-auth', config }])).toBe(message);
  });

  test('key_in_body: false (Kong\'s default, what kong.yaml sets) loads', () => {
    expect(loadError([{ name: 'key-auth', config: { key_in_body: false } }])).toBe('(loaded)');
  });
});

/* ---------- option readers: YAML null is the default ---------- */

describe('an option given as YAML null means its default (definition.ts readers)', () => {
  test('key_names: null is [apikey]: the `apikey` header authenticates', async () => {
    await withGateway([{ name: 'key-auth', config: { key_names: null } }], async ({ request }) => {
      expect((await request({ headers: { apikey: 'alice-key' } })).res.status).toBe(200);
    });
  });

  test('hide_credentials: null is false: the service receives the key header', async () => {
    await withGateway([{ name: 'key-auth', config: { hide_credentials: null } }], async ({ request }) => {
      const { proxied } = await request({ headers: { apikey: 'alice-key' } });
      expect(proxied!.headers.apikey).toBe('alice-key');
    });
  });

  test('realm: null is no realm: WWW-Authenticate: Key', async () => {
    await withGateway([{ name: 'key-auth', config: { realm: null } }], async ({ request }) => {
      const { res } = await request();
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Key');
    });
  });

  test('allowed_payload_size: null is 128: with size_unit bytes, 128 bytes pass and 129 are a 413', async () => {
    await withGateway([{ name: 'request-size-limiting', config: { allowed_payload_size: null, size_unit: 'bytes' } }], async ({ request }) => {
      expect((await request({ method: 'POST', body: 'x'.repeat(128) })).res.status).toBe(200);
      const over = await request({ method: 'POST', body: 'x'.repeat(129) });
      expect(over.res.status).toBe(413);
      expect(over.proxied).toBeUndefined();
    });
  });

  test('size_unit: null is megabytes', () => {
    expect(loadError([{ name: 'request-size-limiting', config: { size_unit: null } }])).toBe('(loaded)');
  });
});

describe('request-size-limiting values refused at load (definition.ts optNumber, oneOf)', () => {
  test.each([
    ['allowed_payload_size: .inf', { allowed_payload_size: Infinity }, 'allowed_payload_size: expected a number'],
    ['allowed_payload_size: .nan', { allowed_payload_size: NaN }, 'allowed_payload_size: expected a number'],
    ["size_unit: ''", { size_unit: '' }, 'size_unit: "" is not a size unit (supported: megabytes, kilobytes, bytes)'],
  ])('%s', (_label, config, message) => {
    expect(loadError([{ name: 'request-size-limiting', config }])).toBe(`${AT} (request-size-limiting).config.${message}`);
  });
});

/* ---------- request-size-limiting ---------- */

describe("request-size-limiting with no options: Kong 3.9.1's defaults (kong/plugins/request-size-limiting/schema.lua)", () => {
  const defaults: Plugin[] = [{ name: 'request-size-limiting', config: {} }];
  // nginx's own client_max_body_size off, so the plugin's 128 MiB is what decides.
  const noNginxLimit = { KONG_NGINX_HTTP_CLIENT_MAX_BODY_SIZE: '0' };

  test('a GET with neither body nor Content-Length is proxied: no 411 (require_content_length false)', async () => {
    await withGateway(defaults, async ({ request }) => {
      const { res, proxied } = await request();
      expect(res.status).toBe(200);
      expect(proxied!.method).toBe('GET');
    });
  });

  test('128 MiB announced: the body is invited (100 Continue); one byte more: 417 before any body is sent', async () => {
    await withGateway(
      defaults,
      async ({ gateway }) => {
        expect(await announce(gateway.url, 128 * MIB)).toBe('100 Continue');
        const over = await announce(gateway.url, 128 * MIB + 1);
        expect(over).toMatchObject({ status: 417, json: { error: 'Request size limit exceeded' } });
      },
      noNginxLimit,
    );
  });

  test('allowed_payload_size alone is in megabytes: 1 MiB passes, 1 MiB + 1 byte is a 413', async () => {
    await withGateway([{ name: 'request-size-limiting', config: { allowed_payload_size: 1 } }], async ({ request }) => {
      expect((await request({ method: 'POST', body: 'x'.repeat(MIB) })).res.status).toBe(200);
      expect((await request({ method: 'POST', body: 'x'.repeat(MIB + 1) })).res.status).toBe(413);
    });
  });
});

describe('request-size-limiting and Expect: 100-continue (kong/plugins/request-size-limiting/handler.lua)', () => {
  const tenBytes: Plugin[] = [{ name: 'request-size-limiting', config: { allowed_payload_size: 10, size_unit: 'bytes' } }];

  test('a Content-Length over the limit with Expect: 100-continue: 417 "Request size limit exceeded", no 100 Continue', async () => {
    await withGateway(tenBytes, async ({ gateway, upstream }) => {
      const res = await announce(gateway.url, 11);
      expect(res).toMatchObject({ status: 417, headers: { 'content-type': JSON_TYPE }, json: { error: 'Request size limit exceeded' } });
      expect(upstream.received).toHaveLength(0);
    });
  });

  test('the expectation is case-insensitive: Expect: 100-Continue over the limit is a 417 too', async () => {
    await withGateway(tenBytes, async ({ gateway }) => {
      expect(await announce(gateway.url, 11, '100-Continue')).toMatchObject({ status: 417 });
    });
  });

  test('within the limit, Expect: 100-continue gets 100 Continue: the body is invited, not refused', async () => {
    await withGateway(tenBytes, async ({ gateway }) => {
      expect(await announce(gateway.url, 10)).toBe('100 Continue');
    });
  });

  test('over the limit without Expect: 413, not 417', async () => {
    await withGateway(tenBytes, async ({ request }) => {
      expect((await request({ method: 'POST', body: '01234567890' })).res.status).toBe(413);
    });
  });

  test('a chunked body over the limit with Expect: 100-continue is read, then refused 417', async () => {
    await withGateway(tenBytes, async ({ request }) => {
      const { res, proxied } = await request({ method: 'POST', headers: { Expect: '100-continue' }, body: '01234567890', chunked: true });
      expect(res.status).toBe(417);
      expect(proxied).toBeUndefined();
    });
  });
});

/**
 * What partners and the service see of authentication through kong.yaml + demo.yaml: the
 * gateway's own 401/403 answers are JSON with Kong's Content-Type, and every spelling of the key
 * header, `X_API_Key` included, is stripped before the service sees it.
 */
import { DEMO, gatewayOverStub, send } from './support';

const JSON_TYPE = 'application/json; charset=utf-8';

describe("kong.yaml: the gateway's own answers and the key header's spellings", () => {
  const fx = gatewayOverStub();

  test.each([
    ['no key', {}, 401, { error: 'Missing API key. Pass your key in the X-API-Key header.' }],
    ['an unknown key', { 'X-API-Key': 'demo-nobody-00000000' }, 401, { error: 'Invalid API key' }],
    ['a disabled key', { 'X-API-Key': DEMO.disabled }, 403, { error: 'API key disabled' }],
  ])(
    '%s: answered as JSON with Content-Type application/json; charset=utf-8',
    async (_label, headers, status, body) => {
      const before = fx.upstream.received.length;
      const res = await send(fx.gateway.url, { path: '/api/v1/jobs', headers });
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toBe(JSON_TYPE);
      expect(res.json).toEqual(body);
      expect(fx.upstream.received.length).toBe(before);
    },
  );

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

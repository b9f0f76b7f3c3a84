/**
 * auth-guard on the local gateway, as gateway/plugins/auth-guard/handler.lua specifies it: kong.yaml
 * configures limit 10 failed attempts per client IP per clock minute. Each test acts as its own
 * client (a 127.x.y.z source address), so counters never leak between tests.
 */
import { RateLimitCounters } from '../../gateway/local/plugins/job-rate-limits';
import { authGuardPlugin } from '../../gateway/local/plugins/auth-guard';
import type { RequestContext } from '../../gateway/local/request-context';
import { DEMO, gatewayOverStub, send } from './support';

const stack = gatewayOverStub();

/** auth-guard counts per clock minute: start a test early enough to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 50) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

const get = (localAddress: string, headers: Record<string, string | string[]> = {}) =>
  send(stack.gateway.url, { path: '/api/v1/jobs', headers, localAddress });

test('10 failed attempts (missing, unknown and duplicate keys alike), then 429 JSON with Retry-After for everything from that IP but a valid key', async () => {
  await awayFromMinuteEnd();
  const ip = '127.2.0.1';
  const failures: Array<Record<string, string | string[]>> = [
    {},
    { 'X-API-Key': 'demo-guess-1' },
    { 'X-API-Key': [DEMO.reader, DEMO.writer] },
  ];
  for (let i = 0; i < 10; i++) expect((await get(ip, failures[i % 3])).status).toBe(401);

  const before = stack.upstream.received.length;
  const attempts: Array<Record<string, string | string[]>> = [
    {},
    { 'X-API-Key': 'demo-guess-2' },
    { 'X-API-Key': [DEMO.reader, DEMO.reader] },
    { 'X-API-Key': '' },
  ];
  for (const headers of attempts) {
    const res = await get(ip, headers);
    expect(res.status).toBe(429);
    expect(res.json).toEqual({ error: 'Too many failed authentication attempts' });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // the minute ends where Retry-After says
    expect([59, 0, 1]).toContain((Math.floor(Date.now() / 1000) + retryAfter) % 60);
  }
  expect(stack.upstream.received.length).toBe(before);

  // Another client is not affected.
  expect((await get('127.2.0.2', { 'X-API-Key': DEMO.reader })).status).toBe(200);
});

test('9 failures still let a valid key through, and successful requests never count', async () => {
  await awayFromMinuteEnd();
  const ip = '127.2.0.3';
  for (let i = 0; i < 9; i++) expect((await get(ip)).status).toBe(401);
  for (let i = 0; i < 5; i++) expect((await get(ip, { 'X-API-Key': DEMO.reader })).status).toBe(200);
  expect((await get(ip)).status).toBe(401);
  expect((await get(ip)).status).toBe(429);
  expect((await get(ip, { 'X-API-Key': DEMO.reader })).status).toBe(200);
});

test('past its failure limit an IP (a shared NAT) still gets 200 for every valid key, in the header or the query, and the service sees them; a disabled key gets its 403', async () => {
  await awayFromMinuteEnd();
  const ip = '127.2.0.9';
  for (let i = 0; i < 10; i++) expect((await get(ip, { 'X-API-Key': `demo-guess-${i}` })).status).toBe(401);
  expect((await get(ip, { 'X-API-Key': 'demo-guess-x' })).status).toBe(429);
  const before = stack.upstream.received.length;
  expect((await get(ip, { 'X-API-Key': DEMO.reader })).status).toBe(200);
  expect((await get(ip, { 'X-API-Key': DEMO.writer })).status).toBe(200);
  expect(
    (await send(stack.gateway.url, { path: `/api/v1/jobs?api_key=${DEMO.writer2}`, localAddress: ip })).status,
  ).toBe(200);
  expect(stack.upstream.received.slice(before).map((r) => r.headers['x-consumer-username'])).toEqual([
    'demo-reader',
    'demo-writer',
    'demo-writer-2',
  ]);
  const disabled = await get(ip, { 'X-API-Key': DEMO.disabled });
  expect([disabled.status, disabled.json]).toEqual([403, { error: 'API key disabled' }]);
  expect((await get(ip)).status).toBe(429);
});

test("only the gateway's own 401s count: 403s and the service's own 401s do not", async () => {
  await awayFromMinuteEnd();
  const ip = '127.2.0.4';
  stack.upstream.respond = (_req, res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' });
    res.end('{"error":"service says no"}');
  };
  try {
    for (let i = 0; i < 12; i++) expect((await get(ip, { 'X-API-Key': DEMO.reader })).status).toBe(401);
  } finally {
    stack.upstream.respond = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"ok":true}');
    };
  }
  for (let i = 0; i < 12; i++) expect((await get(ip, { 'X-API-Key': DEMO.disabled })).status).toBe(403);
  expect((await get(ip, { 'X-API-Key': DEMO.reader })).status).toBe(200);
});

describe('the window (a clock minute, as in handler.lua)', () => {
  /** A request as the plugin sees it: a client IP and the phases' state. */
  function fakeCtx(ip: string): RequestContext {
    const noKey = { getHeader: () => undefined, query: { args: new Map() }, config: { credentialsByKey: new Map() } };
    return {
      clientIp: ip,
      pluginState: new Map(),
      status: null,
      source: 'error',
      ...noKey,
    } as unknown as RequestContext;
  }

  test('counts reset when the minute changes; Retry-After is the seconds left in it', () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 15, 400);
    const plugin = authGuardPlugin(new RateLimitCounters(() => now));
    const conf = plugin.parseConfig({ limit: 2 });
    const scope = { routeId: null, serviceId: 's' };
    const fail = (): void => {
      const ctx = fakeCtx('203.0.113.9');
      expect(plugin.access(ctx, conf, scope)).toBeUndefined();
      Object.assign(ctx, { status: 401, source: 'exit' });
      plugin.log!(ctx, conf, scope);
    };
    fail();
    fail();
    const blocked = plugin.access(fakeCtx('203.0.113.9'), conf, scope) as {
      status: number;
      headers: Record<string, string>;
    };
    expect([blocked.status, blocked.headers['Retry-After']]).toEqual([429, '45']);
    now = Date.UTC(2026, 0, 1, 12, 1, 0, 0);
    expect(plugin.access(fakeCtx('203.0.113.9'), conf, scope)).toBeUndefined();
  });

  test('limit must be a whole number above 0, defaulting to 10', () => {
    const plugin = authGuardPlugin(new RateLimitCounters());
    expect(plugin.parseConfig({})).toEqual({ limit: 10, keyNames: ['apikey'] });
    expect(() => plugin.parseConfig({ key_names: [] })).toThrow('key_names');
    expect(() => plugin.parseConfig({ limit: 0 })).toThrow('limit');
    expect(() => plugin.parseConfig({ limit: 1.5 })).toThrow('limit');
  });
});

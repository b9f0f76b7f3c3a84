import { RateLimitCounters } from '../../gateway/local/plugins/job-rate-limits';
import { DEMO, gatewayOverStub, send } from './support';
import type { Parsed } from '../helpers/parsed';

test('a counter restarts with the next window', () => {
  let now = Date.UTC(2026, 0, 1, 0, 0, 59, 0);
  const counters = new RateLimitCounters(() => now);
  counters.increment('k', 1);
  expect(counters.get('k')).toBe(1);
  now += 1000;
  expect(counters.get('k')).toBe(0);
});

/** Windows are aligned to the clock: start a counting test early enough in a minute to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 50) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

describe('rate limits and size limit through the gateway', () => {
  // Tiny limits: 3 reads a minute, 1000 an hour; writes keep kong.yaml's limits.
  const stack = gatewayOverStub({
    edit: (s) => {
      const read = s.services[0].routes.find((r: Parsed) => r.name === 'jobs-read');
      const rl = read.plugins.find((p: Parsed) => p.name === 'job-rate-limits');
      rl.config.minute = 3;
      rl.config.hour = 1000;
    },
  });

  test('per consumer: the RateLimit fields count down, then 429 with Retry-After; other consumers and routes are unaffected', async () => {
    await awayFromMinuteEnd();
    const read = () => send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await read();
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-policy']).toBe('"minute";q=3;w=60, "hour";q=1000;w=3600');
      const reset = Number(res.headers['ratelimit-reset']);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      const hourReset = 3600 - (Math.floor(Date.now() / 1000) % 3600);
      expect(res.headers['ratelimit']).toMatch(
        new RegExp(`^"minute";r=\\d+;t=${reset}, "hour";r=\\d+;t=(${hourReset}|${hourReset + 1})$`),
      );
      remaining.push(
        `${String(res.headers['ratelimit-remaining'])} ${String(res.headers['ratelimit']).replace(/;t=\d+/g, '')}`,
      );
    }
    expect(remaining).toEqual([
      '2 "minute";r=2, "hour";r=999',
      '1 "minute";r=1, "hour";r=998',
      '0 "minute";r=0, "hour";r=997',
    ]);

    const before = stack.upstream.received.length;
    const limited = await read();
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: 'Rate limit exceeded', request_id: limited.headers['x-kong-request-id'] });
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit'] ?? '').toMatch(/^"minute";r=0;t=\d+, "hour";r=997;t=\d+$/);
    expect(limited.headers['retry-after']).toBe(limited.headers['ratelimit-reset']);
    expect(limited.headers['x-request-id']).toBeTruthy();
    expect(stack.upstream.received.length).toBe(before);

    const other = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer } });
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('2');
    const write = await send(stack.gateway.url, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.writer },
      body: '{}',
    });
    expect(write.status).toBe(200);
    expect(write.headers['ratelimit-policy']).toBe('"minute";q=30;w=60, "hour";q=500;w=3600');
    expect(write.headers['ratelimit-remaining']).toBe('29');
  });

  test("over 100 KB: 413 with Kong's message, with Content-Length or streamed without it; the service never sees it", async () => {
    const before = stack.upstream.received.length;
    const big = 'x'.repeat(100 * 1024 + 1);
    for (const chunked of [false, true]) {
      const res = await send(stack.gateway.url, {
        method: 'POST',
        path: '/api/v1/jobs',
        headers: { 'X-API-Key': DEMO.writer2 },
        body: big,
        chunked,
      });
      expect([chunked, res.status]).toEqual([chunked, 413]);
      expect(res.json).toEqual({ error: 'Request size limit exceeded', request_id: res.headers['x-kong-request-id'] });
    }
    expect(stack.upstream.received.length).toBe(before);
  });

  test('exactly 100 KB streamed without Content-Length is forwarded whole', async () => {
    const body = 'y'.repeat(100 * 1024);
    const res = await send(stack.gateway.url, {
      method: 'POST',
      path: '/api/v1/jobs',
      headers: { 'X-API-Key': DEMO.writer2 },
      body,
      chunked: true,
    });
    expect(res.status).toBe(200);
    const got = stack.upstream.received.at(-1)!;
    expect(got.body.toString()).toBe(body);
    expect(got.headers['content-length']).toBe(String(body.length));
  });

  test('rejected requests (no key) do not use up the rate limit', async () => {
    await awayFromMinuteEnd();
    for (let i = 0; i < 5; i++) {
      const res = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': 'demo-unknown' } });
      expect(res.status).toBe(401);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
    const res = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer2 } });
    expect(res.headers['ratelimit-remaining']).toBe('2');
  });
});

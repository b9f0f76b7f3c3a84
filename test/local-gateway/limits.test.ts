import { RateLimitCounters } from '../../gateway/local/plugins/rate-limiting';
import { DEMO, gatewayOverStub, send } from './support';

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
      const read = s.services[0].routes.find((r: any) => r.name === 'jobs-read');
      const rl = read.plugins.find((p: any) => p.name === 'rate-limiting');
      rl.config.minute = 3;
      rl.config.hour = 1000;
    },
  });

  test('per consumer: Kong\'s headers count down, then 429 with Retry-After; other consumers and routes are unaffected', async () => {
    await awayFromMinuteEnd();
    const read = () => send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } });
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await read();
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit-minute']).toBe('3');
      expect(res.headers['x-ratelimit-limit-hour']).toBe('1000');
      expect(res.headers['ratelimit-limit']).toBe('3');
      remaining.push(`${res.headers['x-ratelimit-remaining-minute']}/${res.headers['ratelimit-remaining']}/${res.headers['x-ratelimit-remaining-hour']}`);
      const reset = Number(res.headers['ratelimit-reset']);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
    }
    expect(remaining).toEqual(['2/2/999', '1/1/998', '0/0/997']);

    const before = stack.upstream.received.length;
    const limited = await read();
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: 'Rate limit exceeded', request_id: limited.headers['x-kong-request-id'] });
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-ratelimit-remaining-minute']).toBe('0');
    expect(limited.headers['retry-after']).toBe(limited.headers['ratelimit-reset']);
    expect(limited.headers['x-request-id']).toBeTruthy();
    expect(stack.upstream.received.length).toBe(before);

    const other = await send(stack.gateway.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer } });
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-remaining-minute']).toBe('2');
    const write = await send(stack.gateway.url, { method: 'POST', path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer }, body: '{}' });
    expect(write.status).toBe(200);
    expect(write.headers['x-ratelimit-limit-minute']).toBe('30');
    expect(write.headers['ratelimit-remaining']).toBe('29');
  });

  test('over 100 KB: 413 with Kong\'s message, with Content-Length or streamed without it; the service never sees it', async () => {
    const before = stack.upstream.received.length;
    const big = 'x'.repeat(100 * 1024 + 1);
    for (const chunked of [false, true]) {
      const res = await send(stack.gateway.url, { method: 'POST', path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer2 }, body: big, chunked });
      expect([chunked, res.status]).toEqual([chunked, 413]);
      expect(res.json).toEqual({ error: 'Request size limit exceeded', request_id: res.headers['x-kong-request-id'] });
    }
    expect(stack.upstream.received.length).toBe(before);
  });

  test('exactly 100 KB streamed without Content-Length is forwarded whole', async () => {
    const body = 'y'.repeat(100 * 1024);
    const res = await send(stack.gateway.url, { method: 'POST', path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer2 }, body, chunked: true });
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
    expect(res.headers['x-ratelimit-remaining-minute']).toBe('2');
  });
});

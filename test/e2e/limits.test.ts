/**
 * decisions.md's per-consumer rate limits, end to end: a temp kong.yaml with tiny limits (reads
 * and writes separately), the real service behind it.
 */
import { DEMO, send, gatewayKinds, startStackOn, type Stack } from './support';
import type { Parsed } from '../helpers/parsed';

describe.each(gatewayKinds())('through the %s', (kind) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStackOn(kind, 'e2e_limits', {
      edit: (s) => {
        for (const route of s.services[0].routes) {
          const rl = route.plugins.find((p: Parsed) => p.name === 'job-rate-limits');
          rl.config.minute = route.name === 'jobs-write' ? 1 : 2;
        }
      },
    });
  });
  afterAll(() => stack.close());

  /** Windows are aligned to the clock: start early enough in a minute to finish in it. */
  async function awayFromMinuteEnd(): Promise<void> {
    const second = new Date().getUTCSeconds();
    if (second >= 50) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
  }

  test('reads: over the per-minute limit a consumer gets 429 with the RateLimit headers and Retry-After', async () => {
    await awayFromMinuteEnd();
    const read = (key: string) =>
      send(stack.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': key }, query: { limit: '1' } });
    expect((await read(DEMO.reader)).status).toBe(200);
    const last = await read(DEMO.reader);
    expect(last.status).toBe(200);
    expect(last.headers['ratelimit-remaining']).toBe('0');

    const served = stack.service.received.length;
    const limited = await read(DEMO.reader);
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: 'Rate limit exceeded', request_id: limited.headers['x-kong-request-id'] });
    expect(limited.headers['ratelimit-limit']).toBe('2');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(Number(limited.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    expect(limited.headers['retry-after']).toBe(limited.headers['ratelimit-reset']);
    expect(stack.service.received.length).toBe(served);

    // another consumer has its own budget
    expect((await read(DEMO.writer)).status).toBe(200);
  });

  test('writes are limited separately from reads', async () => {
    await awayFromMinuteEnd();
    const create = () =>
      send(stack.url, {
        method: 'POST',
        path: '/api/v1/jobs',
        headers: { 'X-API-Key': DEMO.writer2, 'Content-Type': 'application/json' },
        body: JSON.stringify({ title: 'Rate limited', department: 'Sales', type: 'full-time', description: 'd' }),
      });
    expect((await create()).status).toBe(201);
    const limited = await create();
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeTruthy();
    const read = await send(stack.url, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.writer2 } });
    expect(read.status).toBe(200);
  });
});

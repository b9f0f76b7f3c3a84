/**
 * rate-limiting options kong.yaml does not use today but an operator may set, as Kong 3.9.1's
 * kong/plugins/rate-limiting/handler.lua reads them (issue 12: a mutation run found none tested):
 * limit_by ip / credential / service, hide_client_headers, error_code and error_message, which
 * window the RateLimit-* headers describe, and the sweep that keeps the counters bounded.
 */
import { RateLimitCounters, windowStarts } from '../../gateway/local/plugins/rate-limiting';
import { DEMO, gatewayOverStub, send, type KongState } from './support';

const SECOND_READER_KEY = 'demo-reader-second-key-0c1d';

/** The jobs-read route's rate-limiting config replaced by `config`. */
const readLimits = (config: Record<string, unknown>) => (state: KongState, demo: KongState) => {
  const read = state.services[0].routes.find((r: { name: string }) => r.name === 'jobs-read');
  const plugin = read.plugins.find((p: { name: string }) => p.name === 'rate-limiting');
  plugin.config = config;
  // demo-reader gets a second key, so per-credential and per-consumer counting differ.
  const reader = demo.consumers.find((c: { username: string }) => c.username === 'demo-reader');
  reader.keyauth_credentials.push({ id: '0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f', key: SECOND_READER_KEY });
};

const read = (url: string, key: string, localAddress?: string) =>
  send(url, { path: '/api/v1/jobs', headers: { 'X-API-Key': key }, localAddress });

/** Windows are aligned to the clock: start counting early enough in a minute to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 50) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

describe('limit_by: credential counts each key of a consumer on its own', () => {
  const stack = gatewayOverStub({ edit: readLimits({ minute: 2, limit_by: 'credential', policy: 'local' }) });

  test("two requests per key; the consumer's second key still has its own two", async () => {
    await awayFromMinuteEnd();
    expect((await read(stack.gateway.url, DEMO.reader)).status).toBe(200);
    expect((await read(stack.gateway.url, DEMO.reader)).status).toBe(200);
    expect((await read(stack.gateway.url, DEMO.reader)).status).toBe(429);
    const other = await read(stack.gateway.url, SECOND_READER_KEY);
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-remaining-minute']).toBe('1');
  });
});

describe('limit_by: consumer (the default) counts both keys of a consumer together', () => {
  const stack = gatewayOverStub({ edit: readLimits({ minute: 2, policy: 'local' }) });

  test('the second key is refused once the first has used the consumer\'s two', async () => {
    await awayFromMinuteEnd();
    expect((await read(stack.gateway.url, DEMO.reader)).status).toBe(200);
    expect((await read(stack.gateway.url, DEMO.reader)).status).toBe(200);
    expect((await read(stack.gateway.url, SECOND_READER_KEY)).status).toBe(429);
  });
});

describe('limit_by: ip counts every consumer of one client address together', () => {
  const stack = gatewayOverStub({ edit: readLimits({ minute: 2, limit_by: 'ip', policy: 'local' }) });

  test('two consumers from 127.0.0.1 share two requests; a client at 127.0.0.2 has its own', async () => {
    await awayFromMinuteEnd();
    expect((await read(stack.gateway.url, DEMO.reader, '127.0.0.1')).status).toBe(200);
    expect((await read(stack.gateway.url, DEMO.writer, '127.0.0.1')).status).toBe(200);
    expect((await read(stack.gateway.url, DEMO.writer, '127.0.0.1')).status).toBe(429);
    expect((await read(stack.gateway.url, DEMO.writer, '127.0.0.2')).status).toBe(200);
  });
});

describe('limit_by: service counts every client of the service together', () => {
  const stack = gatewayOverStub({ edit: readLimits({ minute: 2, limit_by: 'service', policy: 'local' }) });

  test('two requests in all, whoever sends them and from wherever', async () => {
    await awayFromMinuteEnd();
    expect((await read(stack.gateway.url, DEMO.reader, '127.0.0.1')).status).toBe(200);
    expect((await read(stack.gateway.url, DEMO.writer, '127.0.0.2')).status).toBe(200);
    expect((await read(stack.gateway.url, DEMO.writer2, '127.0.0.3')).status).toBe(429);
  });
});

describe('hide_client_headers, error_code and error_message', () => {
  const stack = gatewayOverStub({
    edit: readLimits({ minute: 1, policy: 'local', hide_client_headers: true, error_code: 403, error_message: 'Slow down' }),
  });

  test('no rate-limit header on a pass, and the refusal is the configured status and message, without Retry-After', async () => {
    await awayFromMinuteEnd();
    const passed = await read(stack.gateway.url, DEMO.reader);
    expect(passed.status).toBe(200);
    expect(Object.keys(passed.headers).filter((name) => /ratelimit/i.test(name))).toEqual([]);
    const refused = await read(stack.gateway.url, DEMO.reader);
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ error: 'Slow down' });
    expect(refused.headers['retry-after']).toBeUndefined();
    expect(Object.keys(refused.headers).filter((name) => /ratelimit/i.test(name))).toEqual([]);
  });
});

describe('which window the RateLimit-* headers describe', () => {
  const stack = gatewayOverStub({ edit: readLimits({ minute: 5, hour: 5, policy: 'local' }) });

  test('on a tie in requests left, the longer window: its limit, and the seconds until the hour ends', async () => {
    await awayFromMinuteEnd();
    const before = Date.now();
    const res = await read(stack.gateway.url, DEMO.reader);
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-remaining-minute']).toBe('4');
    expect(res.headers['x-ratelimit-remaining-hour']).toBe('4');
    expect(res.headers['ratelimit-limit']).toBe('5');
    expect(res.headers['ratelimit-remaining']).toBe('4');
    // Kong: reset = window - (now - window start), in whole seconds (handler.lua).
    const hourLeft = 3600 - Math.floor((Math.floor(before / 1000) * 1000 - windowStarts(before).hour) / 1000);
    expect(Math.abs(Number(res.headers['ratelimit-reset']) - hourLeft)).toBeLessThanOrEqual(1);
  });
});

describe('the counters stay bounded', () => {
  /** 10,000 one-second counters at a fake clock's start, and a way to move that clock on. */
  function fullCounters(): { counters: RateLimitCounters; advance(ms: number): void } {
    let now = Date.UTC(2026, 0, 1, 0, 0, 0, 0);
    const counters = new RateLimitCounters(() => now);
    for (let i = 0; i < 10_000; i++) counters.increment(`old-${i}`, 1);
    return { counters, advance: (ms) => (now += ms) };
  }

  test('past 10,000 counters, the expired ones are dropped when the next is counted; live ones stay', () => {
    const { counters, advance } = fullCounters();
    expect(counters.size).toBe(10_000);
    counters.increment('live', 60);
    // Still within their second: nothing to drop.
    expect(counters.size).toBe(10_001);
    advance(2000);
    counters.increment('new', 60);
    expect(counters.size).toBe(2);
    expect(counters.get('live')).toBe(1);
    expect(counters.get('new')).toBe(1);
  });

  test('at exactly 10,000 counters nothing is swept, expired or not; below it expired ones wait for the sweep', () => {
    const { counters, advance } = fullCounters();
    advance(2000);
    // Counting an expired key again starts it afresh without adding a counter: still 10,000.
    counters.increment('old-0', 1);
    expect(counters.size).toBe(10_000);
    expect(counters.get('old-0')).toBe(1);
    expect(counters.get('old-1')).toBe(0);
  });

  test('a counter whose window ends this very millisecond is swept', () => {
    const { counters, advance } = fullCounters();
    advance(1000);
    counters.increment('new', 60);
    expect(counters.size).toBe(1);
  });
});

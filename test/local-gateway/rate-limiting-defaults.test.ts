/**
 * rate-limiting's options as an operator writes them (Kong 3.9.1, kong/plugins/rate-limiting/
 * schema.lua and handler.lua): what is counted and answered when an option is left out or set,
 * which window the RateLimit-* headers describe, and the text of a refused configuration. Each
 * configuration is loaded inside its test (plugin-stack.ts says why).
 */
import { loadGateway } from '../../gateway/local/config/load';
import { RateLimitCounters } from '../../gateway/local/plugins/rate-limiting';
import { pluginRegistry } from '../../gateway/local/plugins/registry';
import { ALICE, loadError, withGateway, writeState, type Plugin, type Stack } from './plugin-stack';
import { gatewayEnv } from './support';

const KEY = { apikey: ALICE.keyauth_credentials[0]!.key };
const rateLimiting = (config: Record<string, unknown>): Plugin[] => [{ name: 'rate-limiting', config }];

/** Windows are aligned to the clock: start early enough in a minute to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 50) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
}

/** `n` requests in a row; the answers. */
async function requests(request: Stack['request'], n: number, opts: Parameters<Stack['request']>[0] = {}) {
  const answers = [];
  for (let i = 0; i < n; i++) answers.push((await request(opts)).res);
  return answers;
}

describe("options left out: Kong's defaults", () => {
  test('policy local, limit_by consumer, 429 "API rate limit exceeded", client headers shown', async () => {
    await awayFromMinuteEnd();
    await withGateway(rateLimiting({ minute: 2 }), async ({ request }) => {
      const [first, , third] = await requests(request, 3);
      expect(first!.status).toBe(200);
      expect(first!.headers['x-ratelimit-limit-minute']).toBe('2');
      expect(first!.headers['x-ratelimit-remaining-minute']).toBe('1');
      expect(third!.status).toBe(429);
      expect(third!.json).toEqual({ error: 'API rate limit exceeded', request_id: expect.any(String) });
      expect(Number(third!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });
  });
});

describe('options an operator sets', () => {
  test('error_code and error_message: the refusal is that status and text', async () => {
    await awayFromMinuteEnd();
    await withGateway(rateLimiting({ minute: 1, error_code: 503, error_message: 'Slow down' }), async ({ request }) => {
      const [, second] = await requests(request, 2);
      expect(second!.status).toBe(503);
      expect(second!.json).toEqual({ error: 'Slow down', request_id: expect.any(String) });
    });
  });

  test('hide_client_headers: no X-RateLimit-*, RateLimit-* or Retry-After, on a pass or a refusal', async () => {
    await awayFromMinuteEnd();
    await withGateway(rateLimiting({ minute: 1, hide_client_headers: true }), async ({ request }) => {
      const [first, second] = await requests(request, 2);
      expect(second!.status).toBe(429);
      for (const res of [first!, second!]) {
        expect(Object.keys(res.headers).filter((name) => /ratelimit|retry-after/i.test(name))).toEqual([]);
      }
    });
  });

  test('limit_by credential: a keyed request and an anonymous one (no credential: its IP) count apart', async () => {
    await awayFromMinuteEnd();
    const plugins: Plugin[] = [
      { name: 'key-auth', config: { anonymous: ALICE.username } },
      { name: 'rate-limiting', config: { minute: 1, limit_by: 'credential' } },
    ];
    await withGateway(plugins, async ({ request }) => {
      expect((await request({ headers: KEY })).res.status).toBe(200);
      // Both are alice, so limit_by consumer would have refused this one.
      expect((await request()).res.status).toBe(200);
      expect((await request({ headers: KEY })).res.status).toBe(429);
    });
  });

  test('policy redis: its redis block is dropped unread, so a vault reference in it draws no warning', async () => {
    await awayFromMinuteEnd();
    const plugins = rateLimiting({ minute: 1, policy: 'redis', redis: { host: 'redis', port: 6379, password: '{vault://env/jobs-test-never-set}' } });
    const warnings: string[] = [];
    const state = writeState(9, plugins);
    try {
      loadGateway(state.file, gatewayEnv(undefined), pluginRegistry(new RateLimitCounters()), (warning) => warnings.push(warning));
    } finally {
      state.remove();
    }
    expect(warnings).toEqual([]);
    await withGateway(plugins, async ({ request }) => {
      const [first, second] = await requests(request, 2);
      expect([first!.status, second!.status]).toEqual([200, 429]);
    });
  });
});

describe('which window the headers describe (handler.lua: the fewest left, a tie to the longer window)', () => {
  test('a longer window with fewer left is the one RateLimit-* describe', async () => {
    await withGateway(rateLimiting({ minute: 100, hour: 5 }), async ({ request }) => {
      const { res } = await request();
      expect(res.headers['ratelimit-limit']).toBe('5');
      expect(res.headers['ratelimit-remaining']).toBe('4');
      const secondsLeftInHour = 3600 - (Math.floor(Date.now() / 1000) % 3600);
      expect(Math.abs(Number(res.headers['ratelimit-reset']) - secondsLeftInHour)).toBeLessThanOrEqual(2);
    });
  });

  test('a refused request is not counted: the other windows keep what they had left', async () => {
    await awayFromMinuteEnd();
    await withGateway(rateLimiting({ minute: 2, hour: 10 }), async ({ request }) => {
      const [, second, third] = await requests(request, 3);
      expect(second!.headers['x-ratelimit-remaining-hour']).toBe('8');
      expect(third!.status).toBe(429);
      expect(third!.headers['x-ratelimit-remaining-minute']).toBe('0');
      expect(third!.headers['x-ratelimit-remaining-hour']).toBe('8');
      expect(third!.headers['ratelimit-remaining']).toBe('0');
    });
  });
});

describe('configurations refused at load, with the text the operator reads', () => {
  const AT = 'services[0].routes[0].plugins[0]';
  test.each([
    ['no window at all', {}, 'at least one of second, minute, hour, day, month or year is required'],
    ['limit_by header', { minute: 1, limit_by: 'header' }, 'limit_by: "header" is not reproduced by the local gateway (supported: consumer, credential, ip, service)'],
    ['policy cluster', { minute: 1, policy: 'cluster' }, 'policy: "cluster" is not reproduced by the local gateway (supported: local, redis)'],
  ])('%s', (_label, config, message) => {
    expect(loadError(rateLimiting(config))).toContain(message);
    expect(loadError(rateLimiting(config))).toContain(AT);
  });
});

/**
 * auth-guard on a real Kong 3.9 (the plugin's one home among the real-Kong tests): a client IP
 * past its failure limit (a shared NAT where someone guesses keys) still gets 200 for every valid
 * key, while guesses and keyless requests from it get 429; what counts as a failure and how long a
 * block lasts. Twice: DB-less (the cache loads keys from Kong's LMDB copy) and on PostgreSQL after
 * decK 1.4.0 synced kong.yaml and demo.yaml (kong.conf's db_cache_warmup_entities puts every
 * credential in the cache when the workers start, so the guard never needs the database). Every
 * test uses client addresses of its own (127.4.x.y), so its per-IP counters start empty. The local
 * gateway's side is in test/local-gateway/auth-guard.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRealKong, type RealKong } from '../../harness/real-kong';
import { DEMO, ROOT, send, stubUpstream, type StubUpstream } from '../local-gateway/support';
import type { Parsed } from '../helpers/parsed';

const SECRET = 'auth-guard-kong-secret-0123456789';
const NO_GROUPS = 'demo-no-groups-4e9b2d71';
const TOO_MANY = { error: 'Too many failed authentication attempts' };

let client = 0;
/** A client address no other test used. */
const nextClient = () => `127.4.${Math.floor(++client / 250)}.${(client % 250) + 1}`;

/** auth-guard counts per clock minute: start a test early enough to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

const jobs = (
  kong: RealKong,
  localAddress: string,
  headers: Record<string, string | string[]> = {},
  extra: { rawQuery?: string; method?: string; body?: string; path?: string } = {},
) => send(kong.proxyUrl, { path: '/api/v1/jobs', headers, localAddress, ...extra });

/** Ten of the gateway's own 401s from `ip`, the 11th guess 429: the address is limited. */
async function limit(kong: RealKong, ip: string): Promise<void> {
  for (let i = 0; i < 10; i++) expect((await jobs(kong, ip, { 'X-API-Key': `demo-guess-${i}` })).status).toBe(401);
  const guessed = await jobs(kong, ip, { 'X-API-Key': 'demo-guess-10' });
  expect([guessed.status, guessed.json]).toEqual([429, TOO_MANY]);
}

async function shareNatWithAGuesser(kong: RealKong, ip: string): Promise<void> {
  await awayFromMinuteEnd();
  await limit(kong, ip);
  expect((await jobs(kong, ip)).status).toBe(429);

  expect((await jobs(kong, ip, { 'X-API-Key': DEMO.reader })).status).toBe(200);
  expect((await jobs(kong, ip, { 'X-API-Key': DEMO.writer })).status).toBe(200);
  expect((await jobs(kong, ip, {}, { rawQuery: `api_key=${DEMO.writer2}` })).status).toBe(200);
  expect((await jobs(kong, ip, { 'X-API-Key': DEMO.disabled })).status).toBe(403);
  expect((await jobs(kong, ip, { 'X-API-Key': 'demo-guess-11' })).status).toBe(429);
}

let upstream: StubUpstream;
beforeAll(async () => {
  upstream = await stubUpstream();
});
afterAll(async () => {
  await upstream?.close();
});

describe('DB-less', () => {
  let kong: RealKong;
  beforeAll(async () => {
    kong = await startRealKong({ serviceUrl: `http://127.0.0.1:${upstream.port}`, gatewaySecret: SECRET });
  }, 120_000);
  afterAll(async () => {
    await kong?.stop();
  });

  /** The requests the stub received while `act` ran. */
  async function forwarded(act: () => Promise<unknown>) {
    const before = upstream.received.length;
    await act();
    return upstream.received.slice(before);
  }

  test('an IP past its failure limit gets 200 for every valid key and 429 for guesses', async () => {
    await shareNatWithAGuesser(kong, nextClient());
  });

  test('after 10 failed attempts, 429 with Retry-After until the minute ends, before key-auth, nothing forwarded', async () => {
    await awayFromMinuteEnd();
    const ip = nextClient();
    for (let i = 0; i < 10; i++) expect((await jobs(kong, ip)).status).toBe(401);
    const got = await forwarded(async () => {
      const probes: Array<Record<string, string>> = [{}, { 'X-API-Key': 'demo-unknown-key' }];
      for (const headers of probes) {
        const res = await jobs(kong, ip, headers);
        expect([res.status, res.json]).toEqual([429, TOO_MANY]);
        expect(res.headers['www-authenticate']).toBeUndefined();
        const retryAfter = Number(res.headers['retry-after']);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60 - new Date().getUTCSeconds() + 1);
      }
    });
    expect(got).toEqual([]);
    expect((await jobs(kong, nextClient(), {})).status).toBe(401); // another address is not limited
  });

  test('a valid key after 9 failures goes through and is not counted; past the limit it still goes through', async () => {
    await awayFromMinuteEnd();
    const ip = nextClient();
    for (let i = 0; i < 9; i++) expect((await jobs(kong, ip)).status).toBe(401);
    expect((await jobs(kong, ip, { 'X-API-Key': DEMO.reader })).status).toBe(200);
    expect((await jobs(kong, ip, { 'X-API-Key': DEMO.reader })).status).toBe(200);
    // Had either valid request counted, the limit would already be reached and this would be a 429.
    expect((await jobs(kong, ip)).status).toBe(401);
    expect((await jobs(kong, ip, { 'X-API-Key': 'demo-unknown-key' })).status).toBe(429);
    expect((await jobs(kong, ip, { 'X-API-Key': DEMO.reader })).status).toBe(200);
  });

  test('missing, unknown and duplicate keys all count, on every route; a duplicated valid key is no key once limited', async () => {
    await awayFromMinuteEnd();
    const ip = nextClient();
    const duplicate = () =>
      jobs(kong, ip, { 'X-API-Key': [DEMO.reader, DEMO.reader] }, { method: 'DELETE', path: '/api/v1/jobs/x' });
    for (let i = 0; i < 4; i++) {
      expect((await jobs(kong, ip)).status).toBe(401);
      expect((await jobs(kong, ip, { 'X-API-Key': 'demo-unknown-0' }, { method: 'POST', body: '{}' })).status).toBe(
        401,
      );
      if (i < 2) expect((await duplicate()).status).toBe(401);
    }
    expect((await jobs(kong, ip)).status).toBe(429);
    expect((await duplicate()).status).toBe(429);
    expect((await jobs(kong, ip, { 'X-API-Key': DEMO.reader })).status).toBe(200);
  });

  test('403s, forwarded requests and a 401 the service answered do not count', async () => {
    await awayFromMinuteEnd();
    const ip = nextClient();
    const respond = upstream.respond;
    upstream.respond = (req, res) => {
      res.writeHead(req.url.includes('service-says-401') ? 401 : 200, { 'Content-Type': 'application/json' });
      res.end('{}');
    };
    try {
      for (let i = 0; i < 4; i++) {
        expect((await jobs(kong, ip, { 'X-API-Key': DEMO.disabled })).status).toBe(403);
        expect((await jobs(kong, ip, { 'X-API-Key': DEMO.reader }, { method: 'POST', body: '{}' })).status).toBe(403);
        expect((await jobs(kong, ip, { 'X-API-Key': NO_GROUPS })).status).toBe(403);
        expect((await jobs(kong, ip, { 'X-API-Key': DEMO.reader }, { rawQuery: 'service-says-401' })).status).toBe(401);
      }
      // 16 requests and not limited: a guess still reaches key-auth.
      expect((await jobs(kong, ip, { 'X-API-Key': 'demo-unknown-key' })).status).toBe(401);
    } finally {
      upstream.respond = respond;
    }
  });

  test('counts per clock minute, and its own 429s do not count: a block late in a minute ends with it', async () => {
    // Start the burst in the minute's last seconds; the next minute starts clean.
    const second = new Date().getUTCSeconds();
    if (second < 55) await new Promise((r) => setTimeout(r, (55 - second) * 1000));
    const ip = nextClient();
    for (let i = 0; i < 10; i++) await jobs(kong, ip);
    const blocked = await jobs(kong, ip, { 'X-API-Key': 'demo-unknown-key' });
    expect(blocked.status).toBe(429);
    for (let i = 0; i < 5; i++) expect((await jobs(kong, ip)).status).toBe(429);
    const wait = Number(blocked.headers['retry-after']);
    await new Promise((r) => setTimeout(r, wait * 1000 + 200));
    expect((await jobs(kong, ip, { 'X-API-Key': 'demo-unknown-key' })).status).toBe(401);
  }, 90_000);
});

describe('PostgreSQL, synced by decK 1.4.0', () => {
  let kong: RealKong;
  let dir: string;
  beforeAll(async () => {
    kong = await startRealKong({ postgres: true, gatewaySecret: SECRET });
    dir = mkdtempSync(path.join(os.tmpdir(), 'auth-guard-kong-'));
    const kongYaml = path.join(dir, 'kong.yaml');
    writeFileSync(
      kongYaml,
      readFileSync(path.join(ROOT, 'kong.yaml'), 'utf8').replaceAll(
        'http://jobs-service:3000',
        `http://127.0.0.1:${upstream.port}`,
      ),
    );
    for (const file of [kongYaml, path.join(ROOT, 'demo.yaml')]) {
      const synced = spawnSync('deck', ['sync', '-s', file, '--kong-addr', kong.adminUrl], { encoding: 'utf8' });
      if (synced.status !== 0) throw new Error(`deck sync ${path.basename(file)} failed: ${synced.stderr}`);
    }
    // New workers, as after a restart: they warm the cache with every credential now in the database.
    const reload = spawnSync(kong.kong.nginx, ['-p', kong.prefix, '-c', 'nginx.conf', '-s', 'reload'], {
      env: kong.kong.env,
      encoding: 'utf8',
    });
    if (reload.status !== 0) throw new Error(`nginx -s reload failed: ${reload.stderr}`);
    for (let i = 0; i < 100; i++) {
      if (kong.logs().stderr.split("finished preloading 'keyauth_credentials'").length > 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The routes are built by the new workers shortly after they start.
    for (let i = 0; i < 100 && (await jobs(kong, '127.0.0.1', { 'X-API-Key': DEMO.reader })).status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 120_000);
  afterAll(async () => {
    await kong?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("decK 1.4.0 took kong.yaml's anchors and merge keys: each route's rate limit has the shared settings and its own limits", async () => {
    const admin = async (p: string) =>
      ((await (await fetch(`${kong.adminUrl}${p}`)).json()) as { data: Array<Record<string, Parsed>> }).data;
    const routeNames = new Map((await admin('/routes?size=100')).map((r) => [r.id, r.name]));
    const plugins = await admin('/plugins?size=100');
    const limits = plugins.filter((p) => p.name === 'job-rate-limits');
    for (const { config } of limits) {
      expect(config).toMatchObject({ error_code: 429, error_message: 'Rate limit exceeded' });
      expect(config.redis).toMatchObject({
        host: 'redis',
        port: 6379,
        database: 0,
        timeout: 500,
        password: '{vault://env/jobs-redis-password}',
      });
    }
    const perRoute = limits.map((p) => [
      routeNames.get(p.route?.id),
      p.config.limit_by,
      p.config.minute,
      p.config.hour,
    ]);
    expect(perRoute.sort()).toEqual(
      [
        ['jobs-read', 'consumer', 120, 3000],
        ['jobs-write', 'consumer', 30, 500],
        ['jobs-other-methods', 'consumer', 30, null],
        ['webhooks-read', 'consumer', 60, 600],
        ['webhooks-manage', 'consumer', 20, 200],
        // The API reference is keyless: limited per client IP (docs/decisions.md, "Documentation").
        ['jobs-docs', 'ip', 60, 600],
      ].sort(),
    );
    const keyNames = plugins
      .filter((p) => p.name === 'key-auth' || p.name === 'auth-guard')
      .map((p) => [p.name, p.config.key_names]);
    expect(keyNames.sort()).toEqual([
      ['auth-guard', ['X-API-Key', 'api_key']],
      ['key-auth', ['X-API-Key', 'api_key']],
    ]);
  });

  test('an IP past its failure limit gets 200 for every valid key (from the warmed cache) and 429 for guesses', async () => {
    await shareNatWithAGuesser(kong, nextClient());
  });
});

/**
 * auth-guard on a real Kong 3.9: a client IP past its failure limit (a shared NAT where someone
 * guesses keys) still gets 200 for every valid key, while guesses from it get 429. Twice: DB-less
 * (the cache loads keys from Kong's LMDB copy) and on PostgreSQL after decK 1.4.0 synced kong.yaml
 * and demo.yaml (kong.conf's db_cache_warmup_entities puts every credential in the cache when
 * the workers start, so the guard never needs the database). The local gateway's side is in
 * test/local-gateway/auth-guard.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRealKong, type RealKong } from '../../scripts/real-kong';
import { ROOT, stubUpstream, type StubUpstream } from '../local-gateway/support';
import { DEMO, request } from './both-gateways';

const SECRET = 'auth-guard-kong-secret-0123456789';

/** auth-guard counts per clock minute: start a test early enough to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

async function shareNatWithAGuesser(kong: RealKong, ip: string): Promise<void> {
  await awayFromMinuteEnd();
  const get = (headers: Record<string, string>) => request(kong.proxyUrl, { path: '/api/v1/jobs', headers, localAddress: ip });
  for (let i = 0; i < 10; i++) expect((await get({ 'X-API-Key': `demo-guess-${i}` })).status).toBe(401);
  const guessed = await get({ 'X-API-Key': 'demo-guess-10' });
  expect(guessed.status).toBe(429);
  expect(JSON.parse(guessed.body.toString())).toEqual({ error: 'Too many failed authentication attempts' });
  expect((await get({})).status).toBe(429);

  expect((await get({ 'X-API-Key': DEMO.reader })).status).toBe(200);
  expect((await get({ 'X-API-Key': DEMO.writer })).status).toBe(200);
  const inQuery = await request(kong.proxyUrl, { path: `/api/v1/jobs?api_key=${DEMO.writer2}`, localAddress: ip });
  expect(inQuery.status).toBe(200);
  expect((await get({ 'X-API-Key': DEMO.disabled })).status).toBe(403);
  expect((await get({ 'X-API-Key': 'demo-guess-11' })).status).toBe(429);
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

  test('an IP past its failure limit gets 200 for every valid key and 429 for guesses', async () => {
    await shareNatWithAGuesser(kong, '127.4.0.1');
  });
});

describe('PostgreSQL, synced by decK 1.4.0', () => {
  let kong: RealKong;
  let dir: string;
  beforeAll(async () => {
    kong = await startRealKong({ postgres: true, gatewaySecret: SECRET });
    dir = mkdtempSync(path.join(os.tmpdir(), 'auth-guard-kong-'));
    const kongYaml = path.join(dir, 'kong.yaml');
    writeFileSync(kongYaml, readFileSync(path.join(ROOT, 'kong.yaml'), 'utf8').replace('http://jobs-service:3000', `http://127.0.0.1:${upstream.port}`));
    for (const file of [kongYaml, path.join(ROOT, 'demo.yaml')]) {
      const synced = spawnSync('deck', ['sync', '-s', file, '--kong-addr', kong.adminUrl], { encoding: 'utf8' });
      if (synced.status !== 0) throw new Error(`deck sync ${path.basename(file)} failed: ${synced.stderr}`);
    }
    // New workers, as after a restart: they warm the cache with every credential now in the database.
    const reload = spawnSync(kong.kong.nginx, ['-p', kong.prefix, '-c', 'nginx.conf', '-s', 'reload'], { env: kong.kong.env, encoding: 'utf8' });
    if (reload.status !== 0) throw new Error(`nginx -s reload failed: ${reload.stderr}`);
    for (let i = 0; i < 100; i++) {
      if (kong.logs().stderr.split("finished preloading 'keyauth_credentials'").length > 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The routes are built by the new workers shortly after they start.
    for (let i = 0; i < 100 && (await request(kong.proxyUrl, { path: '/api/v1/jobs', headers: { 'X-API-Key': DEMO.reader } })).status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 120_000);
  afterAll(async () => {
    await kong?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("decK 1.4.0 took kong.yaml's anchors and merge keys: each route's rate limit has the shared settings and its own limits", async () => {
    const plugins = ((await (await fetch(`${kong.adminUrl}/plugins?size=100`)).json()) as { data: Array<{ name: string; config: Record<string, unknown>; route: { id: string } | null }> }).data;
    // The docs route's limit (per IP, no anchor) is written out in full; the jobs routes share theirs.
    const docs = ((await (await fetch(`${kong.adminUrl}/routes/jobs-docs`)).json()) as { id: string }).id;
    const limits = plugins.filter((p) => p.name === 'rate-limiting' && p.route?.id !== docs).map((p) => p.config);
    expect(limits).toHaveLength(3);
    for (const config of limits) {
      expect(config).toMatchObject({ limit_by: 'consumer', policy: 'redis', fault_tolerant: true, error_code: 429, error_message: 'Rate limit exceeded' });
      expect(config.redis).toMatchObject({ host: 'redis', port: 6379, database: 0, timeout: 2000, password: '{vault://env/jobs-redis-password}' });
    }
    expect(limits.map((c) => [c.minute, c.hour]).sort()).toEqual([[120, 3000], [30, 500], [30, null]].sort());
    const keyNames = plugins.filter((p) => p.name === 'key-auth' || p.name === 'auth-guard').map((p) => p.config.key_names);
    expect(keyNames).toEqual([['X-API-Key', 'api_key'], ['X-API-Key', 'api_key']]);
  });

  test('an IP past its failure limit gets 200 for every valid key (from the warmed cache) and 429 for guesses', async () => {
    await shareNatWithAGuesser(kong, '127.4.0.2');
  });
});

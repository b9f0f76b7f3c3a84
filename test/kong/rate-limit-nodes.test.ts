/**
 * kong.yaml's rate limits (job-rate-limits) across two DB-less Kong nodes sharing one Redis, as
 * production runs several nodes: each node counts in its own memory and adds its counts to Redis
 * every sync_rate seconds, reading every node's totals back. A consumer driven through both nodes
 * at several times its limit gets the limit, and no more than docs/guides/rate-limits.md's bound
 * past it. With Redis gone or silent, each node enforces the limits on its own counts, without
 * waiting for Redis, and its log says why once; with Redis back, the counts made meanwhile are
 * merged there and each node says so once. auth-guard, by design, counts per node. The Redis is
 * this test's own redis-server (never the machine's), so stopping it hurts no one.
 */
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import {
  startRealKong,
  startRedis,
  type DeclarativeConfig,
  type OwnRedis,
  type RealKong,
} from '../../harness/real-kong';
import { checkRecordedAlert, scrape } from '../helpers/alert-recording';
import { DEMO, send as raw, stubUpstream, type StubUpstream } from '../local-gateway/support';

const READS_PER_MINUTE = 20;
/** job-rate-limits' default sync_rate (gateway/plugins/job-rate-limits/schema.lua), seconds. */
const SYNC_RATE = 0.2;
let upstream: StubUpstream;
let redis: OwnRedis;
let nodes: RealKong[];
/** Each node's /metrics as Prometheus would scrape them: counting, then with Redis away. */
const scraped: Array<Array<string | null>> = [[], []];
/** OUTAGE_KEY's reads answered 200 since Redis went away, which Redis must hold once it is back. */
let countedAlone = 0;
const OUTAGE_KEY = 'outage-reader-3d9f1b27';

beforeAll(async () => {
  upstream = await stubUpstream();
  redis = await startRedis();
  const node = () =>
    startRealKong({
      serviceUrl: `http://127.0.0.1:${upstream.port}`,
      gatewaySecret: 'nodes-secret',
      redis,
      edit: (config) => {
        // A consumer of the outage tests' own, its budget untouched by the tests before them.
        config.consumers.push({
          username: 'outage-reader',
          keyauth_credentials: [{ key: OUTAGE_KEY }],
          acls: [{ group: 'jobs:read' }],
        });
        const read = config.services[0].routes.find((r: DeclarativeConfig) => r.name === 'jobs-read');
        read.plugins.find((p: DeclarativeConfig) => p.name === 'job-rate-limits').config.minute = READS_PER_MINUTE;
      },
    });
  nodes = [await node(), await node()];
}, 120_000);
afterAll(async () => {
  for (const n of nodes ?? []) await n.stop();
  await redis?.stop();
  await upstream?.close();
});

const read = (node: RealKong, key: string) => fetch(`${node.proxyUrl}/api/v1/jobs`, { headers: { 'X-API-Key': key } });

/** Windows are clock minutes: start early enough in one to finish in it. */
async function awayFromMinuteEnd(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 50) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

const cli = (...args: string[]) =>
  execFileSync('redis-cli', ['-p', String(redis.port), '--no-auth-warning', '-a', redis.password, ...args], {
    encoding: 'utf8',
  }).trim();

/** The most of `times` (ms) within any span of `spanMs`. */
function densest(times: number[], spanMs: number): number {
  let most = 0;
  for (const [i, from] of times.entries())
    most = Math.max(most, times.slice(i).filter((t) => t - from < spanMs).length);
  return most;
}

test('one consumer driven through both nodes at four times its limit gets between the limit and the limit plus the bound', async () => {
  await awayFromMinuteEnd();
  // One request every 25 ms, alternating nodes, none waiting for the one before: 20 a second on each node.
  const sent: Array<{ node: number; at: number; answer: Promise<number> }> = [];
  for (let i = 0; i < 4 * READS_PER_MINUTE; i++) {
    const node = i % 2;
    sent.push({
      node,
      at: Date.now(),
      answer: read(nodes[node]!, DEMO.reader).then(async (res) => (await res.arrayBuffer(), res.status)),
    });
    await new Promise((r) => setTimeout(r, 25));
  }
  const statuses = await Promise.all(sent.map((s) => s.answer));
  expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  const ok = statuses.filter((s) => s === 200).length;
  // docs/guides/rate-limits.md: past the limit, at most what the other node took in 2 x (sync_rate + d),
  // d the 0.25 s the guide allows an exchange (a Redis round trip and a busy worker's timer lag).
  const otherNodeBurst = Math.max(
    ...[0, 1].map((node) =>
      densest(
        sent.filter((s) => s.node !== node).map((s) => s.at),
        2 * (SYNC_RATE + 0.25) * 1000,
      ),
    ),
  );
  expect(ok).toBeGreaterThanOrEqual(READS_PER_MINUTE);
  expect(ok).toBeLessThanOrEqual(READS_PER_MINUTE + otherNodeBurst);
  // Shared, not once per node.
  expect(ok).toBeLessThan(2 * READS_PER_MINUTE);
  // Another consumer's budget is its own.
  expect((await read(nodes[0]!, DEMO.writer)).status).toBe(200);
  // In Redis within a sync, and living no longer than their window: Redis never fills with old windows.
  await new Promise((r) => setTimeout(r, 2 * SYNC_RATE * 1000 + 200));
  const keys = cli('--scan', '--pattern', 'ratelimit:*').split('\n');
  expect(keys.filter((k) => k.includes(':minute')).length).toBeGreaterThanOrEqual(2);
  for (const key of keys) {
    const ttl = Number(cli('TTL', key));
    expect([key, ttl > 0 && ttl <= (key.endsWith(':hour') ? 3600 : 60)]).toEqual([key, true]);
  }
});

test('requests arriving together on one node, for two consumers, are each counted once and each gets its own count back', async () => {
  await awayFromMinuteEnd();
  const remaining = async (key: string) => {
    const res = await read(nodes[0]!, key);
    await res.arrayBuffer();
    return Number(res.headers.get('ratelimit-remaining'));
  };
  const left = { [DEMO.writer]: await remaining(DEMO.writer), [DEMO.writer2]: await remaining(DEMO.writer2) };
  const keys = [DEMO.writer, DEMO.writer2].flatMap((key) => Array.from({ length: left[key]! + 3 }, () => key));
  const answers = await Promise.all(
    keys.map(async (key) => {
      const res = await read(nodes[0]!, key);
      await res.arrayBuffer();
      return { key, status: res.status, remaining: res.headers.get('ratelimit-remaining') };
    }),
  );
  for (const key of [DEMO.writer, DEMO.writer2]) {
    const mine = answers.filter((a) => a.key === key);
    const counted = mine
      .filter((a) => a.status === 200)
      .map((a) => Number(a.remaining))
      .sort((a, b) => b - a);
    expect([key, counted]).toEqual([key, Array.from({ length: left[key]! }, (_, i) => left[key]! - 1 - i)]);
    expect([key, mine.filter((a) => a.status === 429).length]).toEqual([key, 3]);
  }
});

test('auth-guard counts per node: an address blocked on one node still gets through the other', async () => {
  await awayFromMinuteEnd();
  // An address of its own, so the block stays out of the other tests.
  const send = async (node: RealKong, headers: Record<string, string>) =>
    raw(node.proxyUrl, { path: '/api/v1/jobs', headers, localAddress: '127.6.0.1' });
  for (let i = 0; i < 10; i++) expect((await send(nodes[0]!, { 'X-API-Key': `demo-guess-${i}` })).status).toBe(401);
  // A valid key is never refused by the guard, so only guesses and keyless requests show a block.
  const probes: Array<Record<string, string>> = [{ 'X-API-Key': 'demo-guess-10' }, {}];
  for (const headers of probes) {
    expect((await send(nodes[0]!, headers)).status).toBe(429);
    expect((await send(nodes[1]!, headers)).status).toBe(401);
  }
});

/** Each node's job-rate-limits lines of its error log, waited for (they follow the answers by a sync). */
async function rateLimitLines(node: RealKong, atLeast: number): Promise<string[]> {
  const lines = () =>
    node
      .logs()
      .stderr.split('\n')
      .filter((l) => l.includes('[job-rate-limits]'));
  for (const waitUntil = Date.now() + 3000; lines().length < atLeast && Date.now() < waitUntil;)
    await new Promise((r) => setTimeout(r, 100));
  return lines();
}

test('Redis stopped, then silent: each node enforces the limits on its own counts without waiting for Redis, and logs why once', async () => {
  // The outage, the alerts and the merge below in one clock minute.
  const second = new Date().getUTCSeconds();
  if (second >= 35) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
  for (const [i, node] of nodes.entries()) scraped[i]!.push(await scrape(`${node.statusUrl}/metrics`));
  expect(scraped[0]![0]).toMatch(/^kong_jobs_rate_limits_uncounted_total 0$/m);
  // Five sync periods (sync_rate 0.2 s): the earlier tests' counts reach Redis before it goes, so what is merged later is the outage's alone.
  await new Promise((r) => setTimeout(r, 1000));
  await redis.stop();
  const timed = async (node: RealKong) => {
    const started = Date.now();
    const res = await read(node, OUTAGE_KEY);
    await res.arrayBuffer();
    if (res.status === 200) countedAlone++;
    return { status: res.status, ms: Date.now() - started, left: Number(res.headers.get('ratelimit-remaining')) };
  };
  for (const node of nodes) {
    // What the node knows is left, used up, then refused: the limit holds on the node's own counts.
    const first = await timed(node);
    expect(first.status).toBe(200);
    const answers = [];
    for (let i = 0; i < first.left + 2; i++) answers.push((await timed(node)).status);
    expect(answers).toEqual([...Array(first.left).fill(200), 429, 429]);
    expect((await read(node, 'demo-not-a-key')).status).toBe(401);
  }
  // A Redis that takes connections and never answers: no request waits for it.
  const silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(redis.port, '127.0.0.1', resolve));
  try {
    for (const node of nodes) {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await timed(node));
      expect(answers.map((a) => a.status)).toEqual([429, 429, 429, 429]);
      expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(250);
    }
  } finally {
    silent.close();
  }
  for (const node of nodes) {
    const lines = await rateLimitLines(node, 1);
    expect(lines).toHaveLength(1);
    // Why, as the socket said it: refused on a new connection, reset on a pooled one a sync was using, or a
    // timeout on an exchange Redis's shutdown left unanswered.
    expect(lines[0]).toMatch(
      /Redis unreachable, this node counts on its own until it answers: cannot \w+: (connection (refused|reset by peer)|timeout)/,
    );
  }
});

test("alerts.yml's RateLimitsUncounted fires on each node's series recorded while Redis is away, and not while it counted", async () => {
  // Four scrapes (a minute apart in the rules' time), each after requests the node passed uncounted.
  for (let round = 0; round < 4; round++) {
    for (const node of nodes) for (let i = 0; i < 2; i++) await (await read(node, OUTAGE_KEY)).arrayBuffer();
    await new Promise((r) => setTimeout(r, 1100)); // the exporter's counters reach its shared dict each second
    for (const [i, node] of nodes.entries()) scraped[i]!.push(await scrape(`${node.statusUrl}/metrics`));
  }
  const recordings = nodes.map((_, i) => ({ job: 'kong', instance: `kong-${i + 1}:8100`, scrapes: scraped[i]! }));
  expect(
    checkRecordedAlert('RateLimitsUncounted', recordings, [{ instance: 'kong-1:8100' }, { instance: 'kong-2:8100' }]),
  ).toMatch(/SUCCESS$/);
});

test('Redis back on its address: what each node counted meanwhile is merged there, and each node logs it once', async () => {
  const again = spawn(
    'redis-server',
    [
      '--port',
      String(redis.port),
      '--bind',
      '127.0.0.1',
      '--requirepass',
      redis.password,
      '--save',
      '',
      '--appendonly',
      'no',
    ],
    { stdio: 'ignore' },
  );
  try {
    for (const node of nodes)
      expect((await rateLimitLines(node, 2)).slice(1)).toEqual([
        expect.stringMatching(/Redis answers again, this node's counts are merged with the other nodes'/),
      ]);
    // An empty Redis: it holds exactly the reads both nodes let through while it was away.
    const hours = cli('--scan', '--pattern', 'ratelimit:*:hour').split('\n');
    expect(hours).toHaveLength(1);
    expect(Number(cli('GET', hours[0]!))).toBe(countedAlone);
  } finally {
    again.kill('SIGKILL');
  }
});

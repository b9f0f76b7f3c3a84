/**
 * kong.yaml's rate limits (job-rate-limits, counted in Redis) across two DB-less Kong nodes sharing
 * one Redis, as production runs several nodes: the per-consumer minute limit holds for the pair, not
 * for each node; with Redis gone or silent mid-run, requests still pass within a bounded wait and
 * each node's log says why once; with it back, counting resumes and each node says so once.
 * auth-guard, by design, counts per node. The Redis is this test's own redis-server (never the
 * machine's), so stopping it hurts no one.
 */
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import { startRealKong, startRedis, type OwnRedis, type RealKong } from '../../harness/real-kong';
import { checkRecordedAlert, scrape } from '../helpers/alert-recording';
import { DEMO, send as raw, stubUpstream, type StubUpstream } from '../local-gateway/support';

const READS_PER_MINUTE = 6;
let upstream: StubUpstream;
let redis: OwnRedis;
let nodes: RealKong[];
/** Each node's /metrics as Prometheus would scrape them: counting, then with Redis away. */
const scraped: Array<Array<string | null>> = [[], []];

beforeAll(async () => {
  upstream = await stubUpstream();
  redis = await startRedis();
  const node = () =>
    startRealKong({
      serviceUrl: `http://127.0.0.1:${upstream.port}`,
      gatewaySecret: 'nodes-secret',
      redis,
      edit: (config) => {
        const read = config.services[0].routes.find((r: any) => r.name === 'jobs-read');
        read.plugins.find((p: any) => p.name === 'job-rate-limits').config.minute = READS_PER_MINUTE;
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

test('one consumer alternating between the two nodes gets the minute limit once, not once per node', async () => {
  await awayFromMinuteEnd();
  const statuses: number[] = [];
  for (let i = 0; i < 2 * READS_PER_MINUTE; i++) {
    const res = await read(nodes[i % 2]!, DEMO.reader);
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  expect(statuses.filter((s) => s === 200)).toHaveLength(READS_PER_MINUTE);
  expect(statuses.slice(READS_PER_MINUTE)).toEqual(Array(READS_PER_MINUTE).fill(429));
  // Another consumer's budget is its own, on either node.
  expect((await read(nodes[1]!, DEMO.writer)).status).toBe(200);
  // Counters live no longer than their window: Redis never fills with old windows.
  const cli = (...args: string[]) =>
    execFileSync('redis-cli', ['-p', String(redis.port), '--no-auth-warning', '-a', redis.password, ...args], {
      encoding: 'utf8',
    }).trim();
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

test('Redis stopped, then silent: both nodes answer within a bounded wait (authentication still applies) and each logs why once', async () => {
  for (const [i, node] of nodes.entries()) scraped[i]!.push(await scrape(`${node.statusUrl}/metrics`));
  expect(scraped[0]![0]).toMatch(/^kong_jobs_rate_limits_uncounted_total 0$/m);
  await redis.stop();
  const timed = async (node: RealKong, key: string) => {
    const started = Date.now();
    const res = await read(node, key);
    await res.arrayBuffer();
    return { status: res.status, ms: Date.now() - started, limited: res.headers.has('ratelimit-remaining') };
  };
  for (const node of nodes) {
    for (let i = 0; i < 3; i++)
      expect(await timed(node, DEMO.writer2)).toEqual({ status: 200, ms: expect.any(Number), limited: false });
    expect((await read(node, 'demo-not-a-key')).status).toBe(401);
  }
  // A Redis that takes connections and never answers: each request waits at most kong.yaml's timeout (500 ms).
  const silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(redis.port, '127.0.0.1', resolve));
  try {
    await new Promise((r) => setTimeout(r, 1100)); // past each worker's one-second pause after a failure
    for (const node of nodes) {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await timed(node, DEMO.writer2));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(1500);
    }
  } finally {
    silent.close();
  }
  for (const node of nodes) {
    const lines = node
      .logs()
      .stderr.split('\n')
      .filter((l) => l.includes('[job-rate-limits]'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /Redis unreachable, requests pass uncounted until it answers: cannot connect: connection refused/,
    );
  }
});

test("alerts.yml's RateLimitsUncounted fires on each node's series recorded while Redis is away, and not while it counted", async () => {
  // Four scrapes (a minute apart in the rules' time), each after requests the node passed uncounted.
  for (let round = 0; round < 4; round++) {
    for (const node of nodes) for (let i = 0; i < 2; i++) await (await read(node, DEMO.writer2)).arrayBuffer();
    await new Promise((r) => setTimeout(r, 1100)); // the exporter's counters reach its shared dict each second
    for (const [i, node] of nodes.entries()) scraped[i]!.push(await scrape(`${node.statusUrl}/metrics`));
  }
  const recordings = nodes.map((_, i) => ({ job: 'kong', instance: `kong-${i + 1}:8100`, scrapes: scraped[i]! }));
  expect(
    checkRecordedAlert('RateLimitsUncounted', recordings, [{ instance: 'kong-1:8100' }, { instance: 'kong-2:8100' }]),
  ).toMatch(/SUCCESS$/);
});

test('Redis back on its address: requests are counted again and each node logs it once', async () => {
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
    await new Promise((r) => setTimeout(r, 1500)); // redis-server up, and past each worker's pause
    await awayFromMinuteEnd();
    for (const [i, node] of nodes.entries()) {
      const res = await read(node, DEMO.writer2);
      await res.arrayBuffer();
      // An empty Redis: the pair counts from zero again, once for both nodes.
      expect([res.status, res.headers.get('ratelimit-remaining')]).toEqual([200, String(READS_PER_MINUTE - 1 - i)]);
      // The line reaches the error log a moment after the answer: wait for it, briefly.
      const lines = () =>
        node
          .logs()
          .stderr.split('\n')
          .filter((l) => l.includes('[job-rate-limits]'));
      for (const waitUntil = Date.now() + 3000; lines().length < 2 && Date.now() < waitUntil;)
        await new Promise((r) => setTimeout(r, 100));
      expect(lines().slice(1)).toEqual([expect.stringMatching(/Redis answers again, requests are counted/)]);
    }
  } finally {
    again.kill('SIGKILL');
  }
});

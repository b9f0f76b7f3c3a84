/**
 * kong.yaml's rate limits (policy redis) across two DB-less Kong nodes sharing one Redis, as
 * production runs several nodes: the per-consumer minute limit holds for the pair, not for each
 * node; with Redis gone mid-run, fault_tolerant lets requests through and Kong's log says why.
 * auth-guard, by design, counts per node. The Redis is this test's own redis-server (never the
 * machine's), so stopping it hurts no one.
 */
import { startRealKong, startRedis, type OwnRedis, type RealKong } from '../helpers/real-kong';
import { DEMO, send as raw, stubUpstream, type StubUpstream } from '../local-gateway/support';

const READS_PER_MINUTE = 6;
let upstream: StubUpstream;
let redis: OwnRedis;
let nodes: RealKong[];

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
        read.plugins.find((p: any) => p.name === 'rate-limiting').config.minute = READS_PER_MINUTE;
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
});

test("auth-guard counts per node: an address blocked on one node still gets through the other", async () => {
  await awayFromMinuteEnd();
  // An address of its own, so the block stays out of the other tests.
  const send = async (node: RealKong, headers: Record<string, string>) => raw(node.proxyUrl, { path: '/api/v1/jobs', headers, localAddress: '127.6.0.1' });
  for (let i = 0; i < 10; i++) expect((await send(nodes[0]!, { 'X-API-Key': `demo-guess-${i}` })).status).toBe(401);
  // A valid key is never refused by the guard, so only guesses and keyless requests show a block.
  const probes: Array<Record<string, string>> = [{ 'X-API-Key': 'demo-guess-10' }, {}];
  for (const headers of probes) {
    expect((await send(nodes[0]!, headers)).status).toBe(429);
    expect((await send(nodes[1]!, headers)).status).toBe(401);
  }
});

test('Redis stopped mid-run: both nodes still answer (fault_tolerant, authentication still applies) and the log says why', async () => {
  await redis.stop();
  for (const node of nodes) {
    for (let i = 0; i < 3; i++) expect((await read(node, DEMO.writer2)).status).toBe(200);
    expect((await read(node, 'demo-not-a-key')).status).toBe(401);
  }
  for (const node of nodes) {
    expect(node.logs().stderr).toMatch(/\[rate-limiting\] failed to get usage: .*(connection refused|closed)/);
  }
});

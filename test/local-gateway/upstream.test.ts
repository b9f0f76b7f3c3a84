/**
 * kong.yaml's upstream in the local gateway, as Kong runs it (test/kong/upstream-failover.test.ts
 * runs Kong's): its targets in turn, its host_header, and the service's retries as nginx makes them
 * (proxy_next_upstream error timeout): a try that failed before any answer goes to the next target,
 * except a POST that was already sent, which is a 502. Health checks are Kong's only.
 */
import { freePort } from '../../harness/real-kong';
import {
  configFile,
  DEMO,
  gatewayEnv,
  KONG_YAML,
  repoState,
  startGateway,
  stubUpstream,
  type ConfigFile,
  type StubUpstream,
  type TestGateway,
} from './support';

const SECRET = 'local-upstream-secret-000001';
let stubs: StubUpstream[];
let dead: number;
let config: ConfigFile;
let gateway: TestGateway;

/** kong.yaml's upstream with these targets, the services on it again. */
const serveTargets = async (ports: number[]) => {
  config.state.upstreams = repoState(KONG_YAML).upstreams.map((u: { targets: unknown[] }) => ({
    ...u,
    targets: ports.map((port) => ({ target: `127.0.0.1:${port}` })),
  }));
  for (const service of config.state.services) service.url = 'http://jobs-service:3000';
  const reloaded = gateway.nextReload();
  config.write();
  expect((await reloaded).ok).toBe(true);
};

beforeAll(async () => {
  stubs = [await stubUpstream(), await stubUpstream()];
  dead = await freePort();
  config = configFile(stubs[0]!.port);
  gateway = await startGateway(config.paths, gatewayEnv(SECRET));
});
afterAll(async () => {
  await gateway?.close();
  config?.remove();
  for (const stub of stubs ?? []) await stub.close();
});
beforeEach(() => {
  for (const stub of stubs) {
    stub.received.length = 0;
    stub.respond = (_req, res) => (res.writeHead(200, { 'Content-Type': 'application/json' }), res.end('{"ok":true}'));
  }
});

const read = () => fetch(`${gateway.url}/api/v1/jobs`, { headers: { 'X-API-Key': DEMO.reader } });
const create = () =>
  fetch(`${gateway.url}/api/v1/jobs`, {
    method: 'POST',
    headers: { 'X-API-Key': DEMO.writer, 'Content-Type': 'application/json' },
    body: '{"title":"x"}',
  });

test("requests go to the targets in turn, with the upstream's host_header and the target's port as Host", async () => {
  await serveTargets(stubs.map((s) => s.port));
  for (let i = 0; i < 4; i++) expect((await read()).status).toBe(200);
  expect(stubs.map((s) => s.received.length)).toEqual([2, 2]);
  expect(stubs.map((s) => s.received[0]!.headers.host)).toEqual(stubs.map((s) => `jobs-service:${s.port}`));
});

test('a target that refuses connections: reads and creates alike go to the next one (nothing was sent)', async () => {
  await serveTargets([dead, stubs[0]!.port]);
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await read()).status, (await create()).status);
  expect(statuses).toEqual(Array(8).fill(200));
  expect(stubs[0]!.received.map((r) => r.method)).toEqual(['GET', 'POST', 'GET', 'POST', 'GET', 'POST', 'GET', 'POST']);
});

test('a connection that breaks after the request was sent: a read is answered by the next target, a create is a 502 and never sent again', async () => {
  await serveTargets(stubs.map((s) => s.port));
  stubs[0]!.respond = (_req, res) => res.socket!.destroy();
  const reads = [];
  const creates = [];
  for (let i = 0; i < 4; i++) reads.push((await read()).status);
  for (let i = 0; i < 4; i++) creates.push((await create()).status);
  expect(reads).toEqual([200, 200, 200, 200]);
  // The targets take turns: two creates met the breaking one and got 502, two were answered.
  expect(creates.sort()).toEqual([200, 200, 502, 502]);
  // Each create reached one target once: none was sent again.
  expect(stubs.flatMap((s) => s.received).filter((r) => r.method === 'POST')).toHaveLength(4);
});

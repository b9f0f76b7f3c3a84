/**
 * The bench's four real Kongs (bench/kong.ts) in front of a server that records what reaches it:
 * each passes the bench's reader through with what the service needs, and each is measured with
 * every process it runs.
 */
import { readFileSync } from 'node:fs';
import { startKong, type KongTarget } from '../../bench/kong';
import { DEMO_READER, DEMO_READER_KEY, headersForTarget } from '../../bench/scenarios';
import type { Server } from '../../bench/servers';
import { serve, type Served } from '../helpers/http';

const SECRET = 'bench-kong-test-secret-0123456789';
let upstream: Served;
const received: Array<Record<string, string | string[] | undefined>> = [];
const kongs = new Map<KongTarget, Server>();

beforeAll(async () => {
  upstream = await serve((req, res) => {
    received.push(req.headers);
    res.setHeader('Content-Type', 'application/json');
    res.end('{"data":{}}');
  });
  for (const target of ['kong-bare', 'kong-key-auth', 'kong-bundled', 'kong-ours'] as const)
    kongs.set(target, await startKong(target, upstream.url, SECRET));
}, 180_000);
afterAll(async () => {
  for (const kong of kongs.values()) await kong.stop();
  await upstream?.close();
});

async function through(target: KongTarget) {
  received.length = 0;
  const response = await fetch(`${kongs.get(target)!.url}/api/v1/jobs/0190d6a4-0000-7000-8000-000000000001`, {
    headers: headersForTarget({ as: 'reader', method: 'GET' }, target, SECRET),
  });
  await response.arrayBuffer();
  return { status: response.status, seen: received[0] };
}

test('Kong with no plugin passes the identity headers the client sends, and nothing else checks them', async () => {
  const { status, seen } = await through('kong-bare');
  expect(status).toBe(200);
  expect(seen).toMatchObject({
    'x-gateway-secret': SECRET,
    'x-consumer-id': DEMO_READER.id,
    'x-consumer-groups': DEMO_READER.groups,
  });
});

test("Kong's key-auth + acl + request-transformer finds the reader by key, hides the key, sends its groups and adds the secret", async () => {
  const { status, seen } = await through('kong-key-auth');
  expect(status).toBe(200);
  expect(seen).toMatchObject({
    'x-gateway-secret': SECRET,
    'x-consumer-id': DEMO_READER.id,
    'x-consumer-username': 'demo-reader',
    'x-consumer-groups': 'jobs:read',
  });
  expect(JSON.stringify(seen)).not.toContain(DEMO_READER_KEY);

  const refused = await fetch(`${kongs.get('kong-key-auth')!.url}/api/v1/jobs`, {
    headers: { 'X-API-Key': 'not-a-key' },
  });
  expect(refused.status).toBe(401);
});

test("Kong's own plugins doing our job: key-auth hides the key, the secret is added, rate-limiting counts minute and hour in Redis", async () => {
  const { status, seen } = await through('kong-bundled');
  expect(status).toBe(200);
  expect(seen).toMatchObject({ 'x-gateway-secret': SECRET, 'x-consumer-groups': 'jobs:read' });
  expect(JSON.stringify(seen)).not.toContain(DEMO_READER_KEY);
  // Counted, not let through: with Redis unreachable the plugin answers without these headers (fault_tolerant).
  const remaining = async () => {
    const response = await fetch(`${kongs.get('kong-bundled')!.url}/api/v1/jobs`, {
      headers: { 'X-API-Key': DEMO_READER_KEY },
    });
    await response.arrayBuffer();
    expect(response.headers.get('x-ratelimit-limit-hour')).toBe('1000000000');
    return Number(response.headers.get('x-ratelimit-remaining-hour'));
  };
  const first = await remaining();
  expect(await remaining()).toBe(first - 1);
});

test('our configuration answers the reader through job-scopes with its own secret, its rate limits out of reach', async () => {
  const { status, seen } = await through('kong-ours');
  expect(status).toBe(200);
  expect(seen).toMatchObject({ 'x-gateway-secret': SECRET, 'x-consumer-username': 'demo-reader' });
  const response = await fetch(`${kongs.get('kong-ours')!.url}/api/v1/jobs`, {
    headers: { 'X-API-Key': DEMO_READER_KEY },
  });
  expect(Number(response.headers.get('ratelimit-limit'))).toBe(1_000_000_000);
});

test("each Kong's CPU is read from nginx, its log filters and, where it counts there, its Redis", () => {
  const names = (server: Server) => server.pids().map((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
  for (const kong of kongs.values()) {
    expect(names(kong).filter((name) => name === 'nginx').length).toBeGreaterThanOrEqual(2); // master + worker
    expect(names(kong).filter((name) => name === 'luajit')).toHaveLength(2); // stdout and stderr filters
  }
  expect(names(kongs.get('kong-ours')!)).toContain('redis-server');
  expect(names(kongs.get('kong-bundled')!)).toContain('redis-server');
  expect(names(kongs.get('kong-bare')!)).not.toContain('redis-server');
});

/**
 * docs/operations.md, "Rotating the gateway secret", step by step, under a steady stream of reads
 * and creates: not one request fails. Two real Kong nodes behind a balancer, two service instances
 * behind another (test/kong/balancer.ts), as the page requires; each node and instance is taken out
 * of its balancer, restarted with the step's variables and put back, one at a time. Once DB-less
 * (each node on the rendered decK files) and once with PostgreSQL (both nodes on one database,
 * synced by decK), the two ways production runs Kong. Also shown on the way: `kong reload` with the
 * new value in its environment leaves a node sending the old secret (why the page restarts nodes).
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  createKongDatabase,
  KONG_RECIPE,
  ROOT,
  startRealKong,
  startRedis,
  type KongDatabase,
  type OwnRedis,
  type RealKong,
} from '../../harness/real-kong';
import { insertInBatches } from '../../db/seed';
import { demoJobs } from '../../db/seed-data';
import { createApp } from '../../service/app';
import { loadConfig } from '../../service/config';
import { createLogger } from '../../service/logger';
import { createMetrics, type ServiceMetrics } from '../../service/metrics';
import { freshDatabase, type TestDatabase } from '../helpers/database';
import { serve, type Served } from '../helpers/http';
import { memoryLog } from '../helpers/service';
import { DEMO } from '../local-gateway/support';
import { startBalancer, type Balancer } from './balancer';

const run = promisify(execFile);
const OLD = 'rotation-old-gateway-secret-0123456789';
const NEXT = 'rotation-next-gateway-secret-9876543210';

const page = readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
const section = page.slice(
  page.indexOf('## Rotating the gateway secret'),
  page.indexOf('\n## ', page.indexOf('## Rotating the gateway secret') + 1),
);

test("the page's steps are the ones run below, in this order", () => {
  const steps = [...section.matchAll(/^(\d)\. \*\*([^*]+)\*\*/gm)].map((m) => m[2]!.replace(/\.$/, ''));
  expect(steps).toEqual([
    'Make the next secret',
    'The service accepts both',
    'Each Kong node sends the next',
    'The service drops the old',
    'Check',
  ]);
  expect(section).toContain('GATEWAY_SECRET_NEXT="$NEXT"');
  expect(section).toContain(`JOBS_GATEWAY_SECRET="$NEXT" ${KONG_RECIPE.start}`);
  expect(section).toContain('kong quit');
  expect(section).toContain('jobs_gateway_secret_rejections_total');
});

/** One service instance: the real app configured from these variables, as the service reads them. */
interface Instance {
  url: string;
  metrics: ServiceMetrics;
  close(): Promise<void>;
}

interface Failure {
  request: string;
  outcome: string;
}

describe.each([
  ['DB-less, on the rendered decK files', false],
  ['with PostgreSQL, synced by decK', true],
])('Kong %s', (_label, postgres) => {
  let database: TestDatabase;
  let redis: OwnRedis;
  let kongDatabase: KongDatabase | undefined;
  let deckDir: string | undefined;
  const logs: string[] = [];
  const metrics: ServiceMetrics[] = [];
  /** The X-Gateway-Secret of each request the instances received, by X-Request-ID (the stream's are not kept). */
  const probes = new Map<string, string | undefined>();
  const seen = { old: 0, next: 0 };
  const instances = new Map<string, Instance>();
  const nodes = new Map<string, RealKong>();
  let services: Balancer;
  let kongs: Balancer;

  async function startInstance(env: NodeJS.ProcessEnv): Promise<Instance> {
    const instanceMetrics = createMetrics();
    metrics.push(instanceMetrics);
    const app = createApp({
      db: database.db,
      config: loadConfig(env),
      logger: createLogger('warn', memoryLog(logs)),
      metrics: instanceMetrics,
    }).callback();
    const served: Served = await serve((req, res) => {
      const secret = req.headers['x-gateway-secret'] as string | undefined;
      if (secret === OLD) seen.old++;
      if (secret === NEXT) seen.next++;
      const id = req.headers['x-request-id'];
      if (typeof id === 'string' && id.startsWith('probe-')) probes.set(id, secret);
      void app(req, res);
    });
    const instance = { url: served.url, metrics: instanceMetrics, close: () => served.close() };
    instances.set(served.url, instance);
    return instance;
  }

  async function startNode(secret: string): Promise<RealKong> {
    const node = postgres
      ? await startRealKong({ postgres: true, postgresDatabase: kongDatabase!.name, gatewaySecret: secret, redis })
      : await startRealKong({ serviceUrl: services.url, gatewaySecret: secret, redis });
    nodes.set(node.proxyUrl, node);
    return node;
  }

  /** kong.yaml and demo.yaml into the shared database, as production syncs them (decK 1.x's `deck sync -s` here). */
  function deckSync(adminUrl: string): void {
    deckDir = mkdtempSync(path.join(os.tmpdir(), 'rotation-deck-'));
    writeFileSync(
      path.join(deckDir, 'kong.yaml'),
      readFileSync(path.join(ROOT, 'kong.yaml'), 'utf8')
        .replaceAll('http://jobs-service:3000', services.url)
        .replace(/host: redis\n(\s+)port: 6379/g, `host: ${redis.host}\n$1port: ${redis.port}`),
    );
    copyFileSync(path.join(ROOT, 'demo.yaml'), path.join(deckDir, 'demo.yaml'));
    for (const file of ['kong.yaml', 'demo.yaml']) {
      const out = spawnSync('deck', ['sync', '-s', file, '--kong-addr', adminUrl], { cwd: deckDir, encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`deck sync ${file}: ${out.stderr}`);
    }
  }

  /** What one node sends the service now: a read through it alone, found by its request id. */
  async function secretSentBy(node: RealKong): Promise<string | undefined> {
    const id = `probe-${Math.random().toString(36).slice(2)}`;
    const res = await fetch(`${node.proxyUrl}/api/v1/jobs?limit=1`, {
      headers: { 'X-API-Key': DEMO.reader, 'X-Request-ID': id },
    });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    return probes.get(id);
  }

  async function untilServing(node: RealKong): Promise<void> {
    for (const deadline = Date.now() + 30_000; ;) {
      const res = await fetch(`${node.proxyUrl}/api/v1/jobs?limit=1`, { headers: { 'X-API-Key': DEMO.reader } });
      await res.arrayBuffer();
      if (res.status === 200) return;
      if (Date.now() > deadline) throw new Error(`${node.proxyUrl} still answers ${res.status}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  beforeAll(async () => {
    database = await freshDatabase(postgres ? 'rotation_pg' : 'rotation_dbless');
    await insertInBatches(database.db, demoJobs());
    redis = await startRedis();
    const [a, b] = await Promise.all([startInstance({ GATEWAY_SECRET: OLD }), startInstance({ GATEWAY_SECRET: OLD })]);
    services = await startBalancer([a.url, b.url]);
    if (postgres) {
      kongDatabase = await createKongDatabase();
      const first = await startNode(OLD);
      deckSync(first.adminUrl);
      await startNode(OLD);
    } else {
      await Promise.all([startNode(OLD), startNode(OLD)]);
    }
    // A node rebuilds its router from the database a moment after decK's changes (worker_state_update_frequency).
    for (const node of nodes.values()) await untilServing(node);
    kongs = await startBalancer([...nodes.keys()]);
  }, 120_000);

  afterAll(async () => {
    await kongs?.close();
    await Promise.all([...nodes.values()].map((node) => node.stop()));
    await services?.close();
    await Promise.all([...instances.values()].map((instance) => instance.close()));
    kongDatabase?.drop();
    await redis?.stop();
    await database?.close();
    if (deckDir) rmSync(deckDir, { recursive: true, force: true });
  });

  /** Reads (three partners, in turn) and creates (two writers, in turn) through the balancer in front of Kong, until stopped. */
  function steadyStream(): { stop(): Promise<{ reads: number; creates: number; failures: Failure[] }> } {
    const failures: Failure[] = [];
    let running = true;
    const counts = { reads: 0, creates: 0 };
    const loop = async (
      every: number,
      send: (n: number) => Promise<[string, Response | string]>,
      expected: number,
      count: 'reads' | 'creates',
    ) => {
      for (let n = 0; running; n++) {
        const started = Date.now();
        const [request, outcome] = await send(n);
        counts[count]++;
        if (typeof outcome === 'string') failures.push({ request, outcome });
        else if (outcome.status !== expected)
          failures.push({
            request,
            outcome: `${outcome.status} ${await outcome.text()} (through ${outcome.headers.get('x-balanced-to')})`,
          });
        else await outcome.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, every - (Date.now() - started))));
      }
    };
    // A refused or reset connection is a failed request too (fetch's TypeError, whose cause says which).
    const attempt = async (request: string, init: RequestInit): Promise<[string, Response | string]> => {
      try {
        return [request, await fetch(`${kongs.url}/api/v1/jobs${request.startsWith('GET') ? '?limit=2' : ''}`, init)];
      } catch (error) {
        return [request, `${String(error)} ${String((error as { cause?: unknown }).cause)}`];
      }
    };
    const readers = [DEMO.reader, DEMO.writer, DEMO.writer2];
    const writers = [DEMO.writer, DEMO.writer2];
    // Under the demo quotas for the whole run: reads 120 a minute per partner, creates 30.
    const loops = [
      loop(200, (n) => attempt(`GET as ${n % 3}`, { headers: { 'X-API-Key': readers[n % 3]! } }), 200, 'reads'),
      loop(
        1000,
        (n) =>
          attempt(`POST as ${n % 2}`, {
            method: 'POST',
            headers: { 'X-API-Key': writers[n % 2]!, 'Content-Type': 'application/json' },
            body: JSON.stringify({
              title: `Rotation ${n}`,
              department: 'Ops',
              type: 'contract',
              description: 'Created while the gateway secret rotates.',
            }),
          }),
        201,
        'creates',
      ),
    ];
    return {
      async stop() {
        running = false;
        await Promise.all(loops);
        return { ...counts, failures };
      },
    };
  }

  /** Takes a service instance out, restarts it with `env`, puts it back: step 2 and step 4, per instance. */
  async function restartInstances(env: NodeJS.ProcessEnv): Promise<void> {
    for (const url of [...instances.keys()]) {
      await services.drain(url);
      await instances.get(url)!.close();
      instances.delete(url);
      services.add((await startInstance(env)).url);
    }
  }

  test('the documented rotation fails none of a steady stream of reads and creates', async () => {
    const stream = steadyStream();
    const pause = () => new Promise((resolve) => setTimeout(resolve, 300));
    await pause();

    // Step 2: the service accepts both.
    await restartInstances({ GATEWAY_SECRET: OLD, GATEWAY_SECRET_NEXT: NEXT });
    await pause();

    // Why step 3 restarts: a reload with the new value in its environment keeps the old one (the
    // env vault's code is the same with PostgreSQL: shown once).
    if (!postgres) {
      const [first] = [...nodes.values()];
      await first!.reload({ JOBS_GATEWAY_SECRET: NEXT });
      expect(await secretSentBy(first!)).toBe(OLD);
    }

    // Step 3: each Kong node in turn, out of the balancer, `kong quit`, started with the next secret, ready, back in.
    for (const [url, node] of [...nodes]) {
      await kongs.drain(url);
      // Not spawnSync: the stream, the balancers and the service instances run in this process and must go on meanwhile.
      const quit = await run(node.kong.kong, ['quit', '-p', node.prefix], { env: node.kong.env, cwd: os.tmpdir() });
      expect(quit.stdout).toMatch(/Kong stopped/);
      await node.stop();
      nodes.delete(url);
      const restarted = await startNode(NEXT);
      expect(await secretSentBy(restarted)).toBe(NEXT);
      kongs.add(restarted.proxyUrl);
      await pause();
    }
    const sentOldBefore = seen.old;
    expect(sentOldBefore).toBeGreaterThan(0);

    // Step 4: the service drops the old.
    await restartInstances({ GATEWAY_SECRET: NEXT });
    await pause();
    const { reads, creates, failures } = await stream.stop();

    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(20);
    expect(creates).toBeGreaterThan(3);
    // Both secrets carried the stream, and nothing sent the old one once every node had restarted.
    expect(seen.next).toBeGreaterThan(0);
    expect(seen.old).toBe(sentOldBefore);
    // Step 5: not one refusal counted on any instance, nor any warn line.
    for (const m of metrics)
      expect(await m.registry.getSingleMetricAsString('jobs_gateway_secret_rejections_total')).toMatch(
        /reason="missing"} 0\n[\s\S]*reason="mismatch"} 0/,
      );
    expect(logs).toEqual([]);
    // The old secret is refused from now on.
    const instance = [...instances.values()][0]!;
    expect((await fetch(`${instance.url}/api/v1/jobs?limit=1`, { headers: { 'X-Gateway-Secret': OLD } })).status).toBe(
      401,
    );
    expect((await fetch(`${instance.url}/api/v1/jobs?limit=1`, { headers: { 'X-Gateway-Secret': NEXT } })).status).toBe(
      200,
    );
  }, 120_000);
});

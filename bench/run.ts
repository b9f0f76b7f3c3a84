/**
 * npm run bench [-- options: bench/options.ts, or --help]
 *
 * For each table size: the servers under test run as processes of their own (bench/servers.ts)
 * and wrk drives them from another (bench/generator.ts). Before timing, the baseline's answers are
 * checked byte for byte against the service's (bench/check.ts). Then a warm-up, and rounds in
 * which every target of a scenario takes its turn, until the scenario's ratios are stable
 * (bench/stability.ts). The full sync (S) runs on the largest table. Prints every measurement,
 * writes bench/results/<time>.json and .md and docs/performance.md's latest section. It asserts
 * nothing; how to read it: docs/performance.md.
 *
 * Before and after in one run: --before <dir>, another checkout of this repository built there
 * (npx tsc -b tsconfig.build.json, node_modules present), any commit or a worktree with changes.
 * Its service runs from its own dist on jobs_bench_<size>_before, which its own start-up migrates
 * and which gets a copy of the same jobs (bench/before.ts); D, E, A, B, G and H then each get a
 * "service vs before" row, measured as the pairs are, and the header records its commit. E.g.
 *   git worktree add /work/before-<commit> <commit> && ln -s "$PWD/node_modules" /work/before-<commit>/ &&
 *   (cd /work/before-<commit> && npx tsc -b tsconfig.build.json) && npm run bench -- --scenarios D,E,A,B,G,H --before /work/before-<commit>
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { connectionOptions } from '../db/client';
import { checkBefore, checkScenario } from './check';
import { checkoutLine, describeCheckout, prepareBeforeTable } from './before';
import { measure, measureTogether, type Endpoint, type Measurement } from './measure';
import { parseOptions, USAGE, type Options } from './options';
import { databasePid, pin } from './proc';
import {
  markdownReport,
  markdownTable,
  settled,
  targets,
  writeLatest,
  type RunResult,
  type ScenarioResult,
} from './report';
import { kongUnavailable, startKong } from './kong';
import { linkUnavailable, openLink, type Link } from './link';
import {
  BENCH_WRITER_ID,
  CREATE_BODY,
  DEMO_READER,
  DEMO_READER_KEY,
  headersFor,
  headersForTarget,
  scenariosFor,
  subscriberHeaders,
  withBefore,
  type Scenario,
  type Target,
} from './scenarios';
import {
  ROOT,
  startBareProxy,
  startBaseline,
  startDispatcherProcess,
  startGateway,
  startService,
  type Server,
} from './servers';
import { compareSyncs, syncRatios, type SyncRun } from './sync';
import { prepareTable } from './tables';
import { oldDispatcherMain } from './old-design';
import { benchWebhooks } from './webhooks';

// A scenario whose single request takes longer than this is timed one request at a time.
const SLOW_MS = 2500;
const GATEWAY_SECRET = 'bench-gateway-secret-0123456789abcdef';
// The queue limit that stands for "unbounded" in the overload scenario: more than any connection count it is run with.
const UNBOUNDED_QUEUE = '10000';

const log = (line: string) => console.log(line);

/** Waits until no statement of another session is running on the bench databases (abandoned requests finish). */
async function quiet(admin: mysql.Connection, databases: string[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const [[row]] = await admin.query<mysql.RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db IN (?) AND command = 'Query' AND id <> CONNECTION_ID()",
      [databases],
    );
    if (Number(row!.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function describe(m: Measurement): string {
  const statuses = Object.entries(m.statuses)
    .map(([code, n]) => `${code}:${n}`)
    .join(' ');
  const cpu = Object.entries(m.cpuPerRequest)
    .map(([name, us]) => `${name} ${us.toFixed(name === 'generator' ? 1 : 0)}`)
    .join(', ');
  return (
    `${m.target.padEnd(17)} ${m.reqPerSec.toFixed(m.reqPerSec < 10 ? 2 : 0).padStart(7)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms  ` +
    `µs/req: ${cpu}  [${statuses}${m.errors ? ` errors:${m.errors}` : ''}${m.timeouts ? ` timeouts:${m.timeouts}` : ''}] other load ${m.otherCores.toFixed(2)} cores${m.invalid ? `  INVALID: ${m.invalid}` : ''}`
  );
}

async function benchSize(
  options: Options,
  size: number,
  admin: mysql.Connection,
  run: RunResult,
  largest: boolean,
): Promise<void> {
  log(`\n== ${size.toLocaleString('en-US')} jobs ==`);
  const table = await prepareTable(options.serverUrl, size, { reseed: options.reseed, log });
  run.tables.push({ size, rows: table.rows, seededSeconds: table.seededSeconds });
  const database = new URL(table.url).pathname.slice(1);
  const wants = (...keys: string[]) => options.scenarios.some((key) => keys.includes(key));
  // On a shared core V8's parallel GC helpers wait for the other server's slice while the main thread waits for them.
  const nodeFlags = options.inTurn ? [] : ['--single-threaded-gc'];
  const startBefore = (url: string) =>
    startService(url, {
      poolSize: options.pool,
      gatewaySecret: GATEWAY_SECRET,
      name: 'before',
      nodeFlags,
      node: options.node,
      root: options.before,
    });
  const beforeTable = options.before ? await prepareBeforeTable(table, size, startBefore, log) : undefined;
  if (beforeTable) run.tables.at(-1)!.before = { rows: beforeTable.rows, seededSeconds: beforeTable.seededSeconds };
  const databases = [database, ...(beforeTable ? [new URL(beforeTable.url).pathname.slice(1)] : [])];
  await admin.query(`USE \`${database}\``);
  const createdFrom = Buffer.alloc(16);
  createdFrom.writeUIntBE(new Date(run.startedAt).getTime(), 0, 6);
  // Creates are removed after each timed run: every id from this run on is younger than the start.
  const removeCreates = async () => {
    for (const db of databases)
      await admin.query(`DELETE FROM \`${db}\`.jobs WHERE id >= ? AND created_by_consumer = ?`, [
        createdFrom,
        BENCH_WRITER_ID,
      ]);
  };

  const servers: Server[] = [];
  const started = async (server: Promise<Server>) => {
    const s = await server;
    servers.push(s);
    return s;
  };
  let link: Link | undefined;
  try {
    if (largest && wants('S') && options.linkRate) {
      const why = linkUnavailable();
      if (why) log(`S    on loopback only, no ${options.linkRate} link: ${why}`);
      else link = openLink(options.linkRate);
    }
    // The sync client across the link reaches the gateways at this host's end of it.
    const gatewayHost = link ? '0.0.0.0' : undefined;
    // W's receivers listen on loopback: allowed by name, as npm start allows them (http, 127.0.0.1 only).
    const webhookEnv = {
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
    };
    const service = await started(
      startService(table.url, {
        poolSize: options.pool,
        gatewaySecret: GATEWAY_SECRET,
        nodeFlags,
        node: options.node,
        env: wants('W') ? webhookEnv : {},
      }),
    );
    const baseline = await started(startBaseline(table.url, { poolSize: options.pool, nodeFlags, node: options.node }));
    const before = beforeTable ? await started(startBefore(beforeTable.url)) : undefined;
    const gateway = wants('F-A', 'F-D', 'S')
      ? await started(
          startGateway(service, { gatewaySecret: GATEWAY_SECRET, apiKey: DEMO_READER_KEY, host: gatewayHost }),
        )
      : undefined;
    // F's floor: what the cheapest proxy process costs on this machine (bench/bare-proxy.ts).
    const proxy = wants('F-A', 'F-D')
      ? await started(
          startBareProxy(service, {
            gatewaySecret: GATEWAY_SECRET,
            consumerId: DEMO_READER.id,
            username: DEMO_READER.username,
            groups: DEMO_READER.groups,
          }),
        )
      : undefined;
    const unbounded = wants('O')
      ? await started(
          startService(table.url, {
            poolSize: options.pool,
            gatewaySecret: GATEWAY_SECRET,
            name: 'service-unbounded',
            env: { DB_QUEUE_LIMIT: UNBOUNDED_QUEUE },
            nodeFlags,
            node: options.node,
          }),
        )
      : undefined;

    const endpoints = new Map<Target, Endpoint>();
    endpoints.set('service', { target: 'service', server: service, chain: [service] });
    endpoints.set('baseline', { target: 'baseline', server: baseline, chain: [baseline] });
    if (before) endpoints.set('before', { target: 'before', server: before, chain: [before] });
    if (gateway) endpoints.set('gateway', { target: 'gateway', server: gateway, chain: [gateway, service] });
    if (proxy) endpoints.set('proxy', { target: 'proxy', server: proxy, chain: [proxy, service] });
    if (wants('N', 'N-A')) {
      // Two services of their own, so each one's peak RSS is this scenario's alone.
      for (const [target, nodeDefaults] of [
        ['service-flags', false],
        ['service-node-defaults', true],
      ] as const) {
        // Measured alone (scenario.deployed), so without --single-threaded-gc: memory as deployed.
        const server = await started(
          startService(table.url, {
            poolSize: options.pool,
            gatewaySecret: GATEWAY_SECRET,
            name: target,
            nodeDefaults,
            node: options.node,
          }),
        );
        endpoints.set(target, { target, server, chain: [server] });
      }
    }
    if (unbounded)
      endpoints.set('service-unbounded', { target: 'service-unbounded', server: unbounded, chain: [unbounded] });

    const noKong = wants('K', 'S') ? kongUnavailable() : undefined;
    if (noKong && wants('S')) log(`S    through the local gateway only: ${noKong}`);
    if (wants('K', 'S') && !noKong) {
      // S needs only our configuration; K compares all three.
      for (const target of wants('K')
        ? (['kong-bare', 'kong-key-auth', 'kong-ours'] as const)
        : (['kong-ours'] as const)) {
        const kong = await started(startKong(target, service.url, GATEWAY_SECRET, gatewayHost));
        endpoints.set(target, { target, server: kong, chain: [kong, service] });
      }
    }
    const asked = await scenariosFor(admin, service.url, GATEWAY_SECRET, options.scenarios, {
      overloadConnections: options.overloadConnections,
      kongUnavailable: noKong,
    });
    const scenarios = before ? withBefore(asked) : asked;
    const results = new Map<Scenario, ScenarioResult>();
    const slow = new Set<Scenario>();
    // One request's time, unloaded (from the check): slower scenarios get longer windows.
    const latency = new Map<Scenario, number>();
    for (const scenario of scenarios) {
      const result: ScenarioResult = {
        size,
        key: scenario.key,
        title: scenario.title,
        path: scenario.path,
        unavailable: scenario.unavailable,
        comparison: scenario.comparison,
        measurements: [],
        rounds: 0,
      };
      results.set(scenario, result);
      run.scenarios.push(result);
      if (scenario.unavailable) {
        log(`${scenario.key.padEnd(4)} n/a: ${scenario.unavailable}`);
        continue;
      }
      if (scenario.comparison.reference === 'baseline') {
        result.check = await checkScenario(scenario, service, baseline, {
          databaseUrl: table.url,
          gatewaySecret: GATEWAY_SECRET,
        });
        if (scenario.method === 'POST') await removeCreates();
        latency.set(scenario, result.check.ms);
        if (result.check.ms > SLOW_MS) slow.add(scenario);
        log(
          `${scenario.key.padEnd(4)} ${scenario.title}: response ${result.check.body}; SQL ${result.check.sql}${slow.has(scenario) ? `; ${result.check.ms.toFixed(0)} ms a request: timed one at a time` : ''}`,
        );
      } else if (scenario.comparison.reference === 'before' && before) {
        const check = await checkBefore(scenario, service, before, GATEWAY_SECRET);
        if (scenario.method === 'POST') await removeCreates();
        if ('unavailable' in check) {
          scenario.unavailable = result.unavailable = check.unavailable;
          log(`${scenario.key.padEnd(4)} vs before n/a: ${check.unavailable}`);
          continue;
        }
        result.check = check;
        log(`${scenario.key.padEnd(4)} vs before: response ${check.body}`);
      }
    }
    // A proxied scenario follows its direct one's latency (and slow mode).
    for (const scenario of scenarios) {
      const direct = scenarios.find(
        (s) => s.comparison.reference === 'baseline' && s.method === scenario.method && s.path === scenario.path,
      );
      if (!direct || direct === scenario) continue;
      if (slow.has(direct)) slow.add(scenario);
      latency.set(scenario, latency.get(direct) ?? 0);
    }

    /**
     * At least `seconds`, and long enough for each connection to finish about five requests when
     * requests queue for the pool (at most 15 s); one at a time, three requests (at most 120 s).
     */
    const windowFor = (scenario: Scenario, seconds: number) => {
      const ms = latency.get(scenario) ?? 0;
      if (slow.has(scenario)) return Math.min(120, Math.max(seconds, Math.ceil((3 * ms) / 1000)));
      return Math.min(
        15,
        Math.max(seconds, Math.ceil((5 * ms * (scenario.connections ?? options.connections)) / options.pool / 1000)),
      );
    };
    const dbPid = databasePid();

    const loadOf = (scenario: Scenario, target: Target, round: number, seconds: number) => {
      const oneAtATime = slow.has(scenario);
      return {
        round,
        method: scenario.method,
        paths: scenario.ids ? scenario.ids.map((id) => `${scenario.path}${id}`) : [scenario.path],
        headers: headersForTarget(scenario, target, GATEWAY_SECRET),
        body: scenario.body,
        connections: oneAtATime ? 1 : (scenario.connections ?? options.connections),
        threads: options.threads,
        seconds: scenario.key === 'O' ? options.overloadSeconds : windowFor(scenario, seconds),
        timeoutSeconds: oneAtATime ? 120 : 30,
        mode: oneAtATime ? ('one at a time' as const) : ('load' as const),
        counts: scenario.comparison.counts,
        databasePid: dbPid,
      };
    };
    const endpointOf = (target: Target) => {
      const endpoint = endpoints.get(target);
      if (!endpoint) throw new Error(`${target} is not running`);
      return endpoint;
    };
    const afterWindow = async (scenario: Scenario) => {
      await quiet(admin, databases);
      if (scenario.method === 'POST') await removeCreates();
    };
    const measureOne = async (
      scenario: Scenario,
      target: Target,
      round: number,
      seconds: number,
    ): Promise<Measurement> => {
      const m = await measure(endpointOf(target), loadOf(scenario, target, round, seconds));
      await afterWindow(scenario);
      return m;
    };
    /** Every target of a scenario at once, their servers sharing one core and wrk kept off it. */
    const measureAtOnce = async (scenario: Scenario, round: number, seconds: number): Promise<Measurement[]> => {
      const list = targetsOf(scenario).map(endpointOf);
      const pids = list.flatMap((e) => e.chain.flatMap((s) => s.pids()));
      pin(pids, String(cpus - 1), true);
      try {
        // Same request mix for every target: the headers are the direct ones, the same for each.
        return await measureTogether(list, {
          ...loadOf(scenario, list[0]!.target, round, seconds),
          cpus: cpus > 2 ? `0-${cpus - 2}` : '0',
        });
      } finally {
        pin(pids, `0-${cpus - 1}`, false);
        await afterWindow(scenario);
      }
    };

    const runnable = scenarios.filter((s) => !s.unavailable);
    const targetsOf = (scenario: Scenario) => [...scenario.comparison.subjects, scenario.comparison.reference];
    // One process a side, and a core for the generator and the database: measured at once on a shared core.
    const cpus = os.cpus().length;
    const atOnce = (scenario: Scenario) =>
      !options.inTurn &&
      !scenario.deployed &&
      cpus >= 2 &&
      !slow.has(scenario) &&
      targetsOf(scenario).every((t) => endpointOf(t).chain.length === 1);
    // Each round starts with a different target, so none always runs on a warmer (or busier) machine.
    const inTurn = (list: Target[], round: number) => list.map((_, i) => list[(i + round) % list.length]!);

    if (options.warmup > 0) {
      log(`warm-up: ${options.warmup} s per scenario and target`);
      for (const scenario of runnable) {
        if (slow.has(scenario)) continue;
        if (atOnce(scenario)) await measureAtOnce(scenario, 0, options.warmup).catch(() => undefined);
        else
          for (const target of targetsOf(scenario))
            await measureOne(scenario, target, 0, options.warmup).catch(() => undefined);
      }
    }
    const settledOf = (scenario: Scenario) =>
      scenario.comparison.subjects.map((subject) => settled(results.get(scenario)!, subject, options.spread));
    const done = (scenario: Scenario) => {
      const result = results.get(scenario)!;
      return result.rounds >= options.rounds && settledOf(scenario).every((row) => row?.stable);
    };
    for (let round = 1; round <= options.maxRounds; round++) {
      const pending = runnable.filter((scenario) => !done(scenario));
      if (pending.length === 0) break;
      log(
        `round ${round} (at least ${options.rounds}, at most ${options.maxRounds}): ${pending.map((s) => `${s.key}${s.comparison.reference === 'before' ? ' vs before' : ''}`).join(', ')}`,
      );
      for (const scenario of pending) {
        const result = results.get(scenario)!;
        result.rounds = round;
        const failed = (what: string) => (error: Error) => {
          log(`  ${scenario.key.padEnd(4)} ${what.padEnd(17)} failed: ${error.message}`);
          return [];
        };
        const taken: Measurement[] = [];
        if (atOnce(scenario))
          taken.push(
            ...(await measureAtOnce(scenario, round, options.duration).catch(failed(targetsOf(scenario).join(' + ')))),
          );
        else
          for (const target of inTurn(targetsOf(scenario), round))
            taken.push(
              ...(await measureOne(scenario, target, round, options.duration).then((m) => [m], failed(target))),
            );
        for (const m of taken) {
          result.measurements.push(m);
          log(`  ${scenario.key.padEnd(4)} ${describe(m)}`);
        }
        const rows = settledOf(scenario);
        log(
          `  ${scenario.key.padEnd(4)} ratio ${scenario.comparison.subjects
            .map(
              (subject, i) =>
                `${subject} vs ${scenario.comparison.reference}: ${rows[i] ? `${rows[i]!.throughput.toFixed(3)}x throughput / ${rows[i]!.cpu.toFixed(3)}x CPU, spread ${(rows[i]!.spread * 100).toFixed(1)}%` : 'no valid round yet'}`,
            )
            .join('; ')}`,
        );
      }
    }

    if (wants('W')) {
      const result = await benchWebhooks({
        size,
        service,
        databaseUrl: table.url,
        secretsKey: Buffer.from(webhookEnv.WEBHOOK_SECRETS_KEY, 'base64'),
        startDispatcher: (design) =>
          startDispatcherProcess(table.url, webhookEnv, design === 'today' ? oldDispatcherMain() : undefined),
        writerHeaders: headersFor({ as: 'writer', via: 'direct', method: 'POST' }, GATEWAY_SECRET),
        createBody: CREATE_BODY,
        seconds: options.webhookSeconds,
        databasePid: dbPid,
        log,
      }).catch((error: Error) => {
        log(`W    failed: ${error.message}`);
        return undefined;
      });
      if (result) (run.webhooks ??= []).push(result);
      await quiet(admin, databases);
      await removeCreates();
    }

    if (largest && wants('S')) {
      // Loopback first, then across the partner's link when there is one.
      for (const across of link ? [undefined, link] : [undefined]) {
        for (const target of ['gateway', 'kong-ours'] as const) {
          const endpoint = endpoints.get(target);
          if (endpoint) await benchSync(options, size, target, endpoint.server, run, across);
        }
      }
    }
  } finally {
    for (const server of servers.reverse()) await server.stop();
    link?.close();
    await removeCreates().catch(() => undefined);
  }
}

/** S: full syncs through a gateway, plain against gzip (bench/sync.ts compareSyncs: warm-up not counted, ABBA), on loopback or across `link`. */
async function benchSync(
  options: Options,
  size: number,
  target: 'gateway' | 'kong-ours',
  gateway: Server,
  run: RunResult,
  link?: Link,
): Promise<void> {
  const where = link ? `across a ${link.rate} link` : 'on loopback';
  const headers = { 'X-API-Key': DEMO_READER_KEY };
  const onRun = (r: SyncRun, gzip: boolean, warmup: boolean) =>
    log(
      `S    full sync through ${target} ${where} ${gzip ? 'with gzip' : 'plain    '}: ${r.jobs} jobs, ${r.pages} pages, ${(r.bytes / 1e6).toFixed(1)} MB on the wire (${(r.decodedBytes / 1e6).toFixed(1)} MB decoded, ${r.contentEncoding}), ${r.seconds.toFixed(1)} s${warmup ? ' (warm-up, not counted)' : ''}`,
    );
  const origin = link ? gateway.url.replace('127.0.0.1', link.hostAddress) : gateway.url;
  const comparison = link
    ? await link.compareSyncs(origin, headers, options.syncRounds, onRun)
    : await compareSyncs(origin, headers, options.syncRounds, onRun);
  run.syncs.push(
    { size, target, gzip: false, link: link?.rate, runs: comparison.plain },
    { size, target, gzip: true, link: link?.rate, runs: comparison.gzip },
  );
  const ratios = syncRatios(comparison);
  log(
    `S    ${target} ${where} with gzip: ${(ratios.bytes * 100).toFixed(1)}% of the bytes, ${ratios.time.toFixed(3)}x the time (median pass of ${options.syncRounds} each way)`,
  );
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(USAGE);
    return;
  }
  const options = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const startedAt = new Date();
  const admin = await mysql.createConnection(connectionOptions(`${options.serverUrl.replace(/\/+$/, '')}/mysql`));
  const [[version]] = await admin.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
  const machine: Record<string, string | number> = {
    cpu: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}`,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()}`,
    // The service's and the baseline's (--node); the bench itself, the gateways and wrk's clients run on the bench's.
    node:
      execFileSync(options.node, ['--version'], { encoding: 'utf8' }).trim() +
      (options.node === process.execPath ? '' : ` (--node ${options.node}; the bench and gateways ${process.version})`),
    database: String(version!.v),
    'load average at start': os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
    ...(options.note ? { note: options.note } : {}),
  };
  log(
    `Machine: ${Object.entries(machine)
      .map(([k, v]) => `${k}: ${v}`)
      .join('; ')}`,
  );
  const before = options.before ? describeCheckout(options.before) : undefined;
  if (before) log(`Before: ${checkoutLine(before)}`);
  const run: RunResult = {
    startedAt: startedAt.toISOString(),
    finishedAt: '',
    minutes: 0,
    machine,
    options: { ...options },
    ...(before ? { before } : {}),
    tables: [],
    scenarios: [],
    syncs: [],
    webhooks: [],
  };
  try {
    const largest = Math.max(...options.sizes);
    for (const size of options.sizes) await benchSize(options, size, admin, run, size === largest);
  } finally {
    await admin.end();
  }

  run.finishedAt = new Date().toISOString();
  run.minutes = (performance.now() - started) / 60_000;
  run.machine['load average at end'] = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const markdown = markdownReport(run);
  console.log(`\n${markdownTable(run)}\n\nTargets (valid rows only):\n${targets(run).join('\n')}`);
  const resultsDir = path.join(ROOT, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const stamp = run.startedAt.replace(/[:.]/g, '-');
  writeFileSync(path.join(resultsDir, `${stamp}.json`), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(path.join(resultsDir, `${stamp}.md`), `${markdown}\n`);
  if (options.docs) writeLatest(path.join(ROOT, 'docs/performance.md'), markdown);
  console.log(
    `\nWrote bench/results/${stamp}.json and .md${options.docs ? ' and docs/performance.md\'s "Latest run"' : ' (docs/performance.md left as it was: --no-docs)'} (${run.minutes.toFixed(1)} min).`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

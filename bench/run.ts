/**
 * npm run bench [-- options: bench/options.ts, or --help]
 *
 * A black box: for each table size the service runs from dist/ as a process of its own (as the
 * Dockerfile runs it), beside the raw baseline (bench/baseline.ts), and wrk drives both from other
 * processes (bench/generator.ts). Before timing, the baseline's answers are compared with the
 * service's (bench/check.ts). Then a warm-up, and rounds in which subject and reference are measured
 * at once on one core, until each row's ratios are stable (bench/stability.ts). K runs through real
 * Kong, W through the webhook dispatchers, S (the full sync) on the largest table. Writes
 * bench/results/<time>.json and .md and docs/performance.md's latest section; asserts nothing.
 *
 * --before <dir>: another checkout, built there (npx tsc -b tsconfig.build.json, node_modules
 * present); its service runs from its own dist on a copy of the same jobs (bench/before.ts), and
 * each data-layer scenario gets a "service vs before" row, measured as the pairs are.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import { checkoutLine, describeCheckout } from './before';
import { checkScenario } from './check';
import { kongUnavailable, startKong } from './kong';
import { linkUnavailable, openLink, type Link } from './link';
import { measureTogether, type Endpoint, type Measurement } from './measure';
import { parseOptions, USAGE, type Options } from './options';
import { databasePid, pin } from './proc';
import {
  markdownReport,
  markdownTable,
  settled,
  syncRatios,
  targets,
  writeLatest,
  type RunResult,
  type ScenarioResult,
} from './report';
import {
  BENCH_WRITER_ID,
  CREATE_BODY,
  DEMO_READER_KEY,
  headersForTarget,
  identity,
  scenariosFor,
  withBefore,
  type Scenario,
  type Target,
} from './scenarios';
import { ROOT, startBaseline, startDispatcher, startService, type Server } from './servers';
import { compareSyncs, type SyncRun } from './sync';
import { prepareTable } from './tables';
import { benchWebhooks } from './webhooks';

const GATEWAY_SECRET = 'bench-gateway-secret-0123456789abcdef';
const log = (line: string) => console.log(line);
// On a shared core V8's parallel GC helpers wait for the other server's slice while the main thread waits for them.
const SHARED_CORE_FLAGS = ['--single-threaded-gc'];

/** Waits until no statement of another session runs on the bench databases (abandoned requests finish). */
async function quiet(admin: mysql.Connection, databases: string[]): Promise<void> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
    const [[row]] = await admin.query<mysql.RowDataPacket[]>(
      "select count(*) as n from information_schema.processlist where db in (?) and command = 'Query' and id <> connection_id()",
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
    `${m.target.padEnd(14)} ${m.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms  µs/req: ${cpu}  ` +
    `[${statuses}${m.errors + m.timeouts ? ` errors:${m.errors + m.timeouts}` : ''}] other load ${m.otherCores.toFixed(2)} cores${m.invalid ? `  INVALID: ${m.invalid}` : ''}`
  );
}

interface Context {
  options: Options;
  admin: mysql.Connection;
  run: RunResult;
}

async function benchSize({ options, admin, run }: Context, size: number, largest: boolean) {
  log(`\n== ${size.toLocaleString('en-US')} jobs ==`);
  const table = await prepareTable(options.serverUrl, size, { reseed: options.reseed, log });
  run.tables.push({ size, rows: table.rows, seededSeconds: table.seededSeconds });
  const wants = (...keys: string[]) => options.scenarios.some((key) => keys.includes(key));
  const common = {
    poolSize: options.pool,
    gatewaySecret: GATEWAY_SECRET,
    nodeFlags: SHARED_CORE_FLAGS,
    node: options.node,
  };
  const startBefore = (url: string) => startService(url, { ...common, name: 'before', root: options.before });
  const beforeTable = options.before
    ? await prepareTable(options.serverUrl, size, { log, before: { root: options.before, like: table } })
    : undefined;
  if (beforeTable) run.tables.at(-1)!.before = { seededSeconds: beforeTable.seededSeconds };
  const databases = [table.url, ...(beforeTable ? [beforeTable.url] : [])].map((url) => new URL(url).pathname.slice(1));
  await admin.query(`use \`${databases[0]}\``);
  const createdFrom = Buffer.alloc(16);
  createdFrom.writeUIntBE(new Date(run.startedAt).getTime(), 0, 6);
  // Creates are removed after each timed window: every id made in this run is younger than its start.
  const removeCreates = async () => {
    for (const db of databases)
      await admin.query(`delete from \`${db}\`.jobs where id >= ? and created_by_consumer = ?`, [
        createdFrom,
        BENCH_WRITER_ID,
      ]);
  };

  const servers: Server[] = [];
  const started = async (server: Promise<Server>) => (servers.push(await server), servers.at(-1)!);
  let link: Link | undefined;
  try {
    if (largest && wants('S') && options.linkRate) {
      const why = linkUnavailable();
      if (why) log(`S    on loopback only, no ${options.linkRate} link: ${why}`);
      else link = openLink(options.linkRate);
    }
    // W's receivers listen on loopback: allowed by name, as npm start allows them.
    const webhookEnv = {
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
    };
    const service = await started(startService(table.url, { ...common, env: wants('W') ? webhookEnv : {} }));
    const endpoints = new Map<Target, Endpoint>();
    const add = (target: Target, server: Server, chain = [server]) => endpoints.set(target, { target, server, chain });
    add('service', service);
    add('baseline', await started(startBaseline(table.url, common)));
    if (beforeTable) add('before', await started(startBefore(beforeTable.url)));
    const noKong = wants('K', 'S') ? kongUnavailable() : undefined;
    if (noKong && wants('S')) log(`S    not run: ${noKong}`);
    if (wants('K', 'S') && !noKong) {
      // The sync client across the link reaches Kong at this host's end of it.
      for (const target of wants('K')
        ? (['kong-bare', 'kong-key-auth', 'kong-ours'] as const)
        : (['kong-ours'] as const)) {
        const kong = await started(startKong(target, service.url, GATEWAY_SECRET, link ? '0.0.0.0' : undefined));
        add(target, kong, [kong, service]);
      }
    }
    const asked = await scenariosFor(admin, options.scenarios, noKong);
    const scenarios = beforeTable ? withBefore(asked) : asked;
    const results = new Map<Scenario, ScenarioResult>();
    for (const scenario of scenarios) {
      const { key, title, path: requestPath, unavailable, comparison } = scenario;
      const result: ScenarioResult = {
        size,
        key,
        title,
        path: requestPath,
        unavailable,
        comparison,
        measurements: [],
        rounds: 0,
      };
      results.set(scenario, result);
      run.scenarios.push(result);
      if (!unavailable && comparison.reference !== 'service') {
        const check = await checkScenario(
          scenario,
          service,
          endpoints.get(comparison.reference)!.server,
          GATEWAY_SECRET,
        );
        if (scenario.method === 'POST') await removeCreates();
        if ('unavailable' in check) scenario.unavailable = result.unavailable = check.unavailable;
        else result.check = check;
      }
      log(
        `${key.padEnd(4)} ${title} vs ${comparison.reference}: ${scenario.unavailable ?? `response ${result.check?.body ?? 'not compared'}`}`,
      );
    }

    const dbPid = databasePid();
    const cpus = os.cpus().length;
    const targetsOf = (scenario: Scenario) => [...scenario.comparison.subjects, scenario.comparison.reference];
    // One process a side, and a core left for the generators and the database: measured at once on a shared core.
    const atOnce = (scenario: Scenario) =>
      cpus >= 2 && targetsOf(scenario).every((target) => endpoints.get(target)!.chain.length === 1);
    const measureRound = async (scenario: Scenario, round: number, seconds: number): Promise<Measurement[]> => {
      const load = (target: Target) => ({
        round,
        method: scenario.method,
        paths: scenario.ids ? scenario.ids.map((id) => `${scenario.path}${id}`) : [scenario.path],
        headers: headersForTarget(scenario, target, GATEWAY_SECRET),
        body: scenario.body,
        connections: options.connections,
        threads: options.threads,
        seconds,
        timeoutSeconds: 30,
        databasePid: dbPid,
      });
      const taken: Measurement[] = [];
      try {
        if (atOnce(scenario)) {
          const list = targetsOf(scenario).map((target) => endpoints.get(target)!);
          const pids = list.flatMap((e) => e.server.pids());
          pin(pids, String(cpus - 1), true);
          try {
            // The same request mix for every target: the direct headers, the same for each.
            taken.push(...(await measureTogether(list, { ...load(list[0]!.target), cpus: `0-${cpus - 2}` })));
          } finally {
            pin(pids, `0-${cpus - 1}`, false);
          }
        } else {
          // Each round starts with a different target, so none always runs on a warmer (or busier) machine.
          const list = targetsOf(scenario);
          for (const target of list.map((_, i) => list[(i + round) % list.length]!))
            taken.push(...(await measureTogether([endpoints.get(target)!], load(target))));
        }
      } catch (error) {
        log(`  ${scenario.key.padEnd(4)} failed: ${(error as Error).message}`);
      }
      await quiet(admin, databases);
      if (scenario.method === 'POST') await removeCreates();
      return taken;
    };

    const runnable = scenarios.filter((s) => !s.unavailable);
    if (options.warmup > 0) {
      log(`warm-up: ${options.warmup} s per scenario`);
      for (const scenario of runnable) await measureRound(scenario, 0, options.warmup);
    }
    const settledOf = (scenario: Scenario) =>
      scenario.comparison.subjects.map((subject) => settled(results.get(scenario)!, subject, options.spread));
    const done = (scenario: Scenario) =>
      results.get(scenario)!.rounds >= options.rounds && settledOf(scenario).every((row) => row?.stable);
    for (let round = 1; round <= options.maxRounds; round++) {
      const pending = runnable.filter((scenario) => !done(scenario));
      if (pending.length === 0) break;
      log(
        `round ${round} (at least ${options.rounds}, at most ${options.maxRounds}): ${pending.map((s) => `${s.key} vs ${s.comparison.reference}`).join(', ')}`,
      );
      for (const scenario of pending) {
        const result = results.get(scenario)!;
        result.rounds = round;
        for (const m of await measureRound(scenario, round, options.duration)) {
          result.measurements.push(m);
          log(`  ${scenario.key.padEnd(4)} ${describe(m)}`);
        }
        const rows = settledOf(scenario);
        log(
          `  ${scenario.key.padEnd(4)} ${scenario.comparison.subjects
            .map((subject, i) => {
              const row = rows[i];
              const figure = row
                ? `${row.throughput.toFixed(3)}x throughput / ${row.cpu.toFixed(3)}x CPU, spread ${(row.spread * 100).toFixed(1)}%`
                : 'no valid round yet';
              return `${subject} vs ${scenario.comparison.reference}: ${figure}`;
            })
            .join('; ')}`,
        );
      }
    }

    if (wants('W')) {
      // A run that died before its clean-up left subscriptions to dead ports.
      await admin.query("delete from webhook_subscriptions where consumer_id like 'bench-hooks-%'");
      const subscriber = (n: number) =>
        identity({ id: `bench-hooks-${n + 1}`, username: `bench-hooks-${n + 1}`, groups: 'jobs:read' }, GATEWAY_SECRET);
      const result = await benchWebhooks({
        size,
        service,
        startDispatcher: () => startDispatcher(table.url, webhookEnv),
        subscriber,
        writerHeaders: headersForTarget({ as: 'writer', method: 'POST' }, 'service', GATEWAY_SECRET),
        createBody: CREATE_BODY,
        seconds: options.webhookSeconds,
        databasePid: dbPid,
        log,
      }).catch((error: Error) => void log(`W    failed: ${error.message}`));
      if (result) (run.webhooks ??= []).push(result);
      await quiet(admin, databases);
      await removeCreates();
    }

    const kong = endpoints.get('kong-ours');
    if (largest && wants('S') && kong) {
      // Loopback first, then across the partner's link when there is one.
      for (const across of link ? [undefined, link] : [undefined])
        await benchSync({ options, admin, run }, size, kong.server, across);
    }
  } finally {
    for (const server of servers.reverse()) await server.stop();
    link?.close();
    await removeCreates().catch(() => undefined);
  }
}

/** S: full syncs through real Kong, plain against gzip (bench/sync.ts), on loopback or across `link`. */
async function benchSync({ options, run }: Context, size: number, kong: Server, link?: Link): Promise<void> {
  const where = link ? `across a ${link.rate} link` : 'on loopback';
  const headers = { 'X-API-Key': DEMO_READER_KEY };
  const onRun = (r: SyncRun, gzip: boolean, warmup: boolean) =>
    log(
      `S    full sync ${where} ${gzip ? 'with gzip' : 'plain    '}: ${r.jobs} jobs, ${r.pages} pages, ${(r.bytes / 1e6).toFixed(1)} MB on the wire (${(r.decodedBytes / 1e6).toFixed(1)} MB decoded, ${r.contentEncoding}), ${r.seconds.toFixed(1)} s${warmup ? ' (warm-up, not counted)' : ''}`,
    );
  const comparison = link
    ? await link.compareSyncs(kong.url.replace('127.0.0.1', link.hostAddress), headers, options.syncRounds, onRun)
    : await compareSyncs(kong.url, headers, options.syncRounds, onRun);
  const target = 'kong-ours';
  run.syncs.push(
    { size, target, gzip: false, link: link?.rate, runs: comparison.plain },
    { size, target, gzip: true, link: link?.rate, runs: comparison.gzip },
  );
  const ratios = syncRatios(comparison);
  log(`S    ${where} with gzip: ${(ratios.bytes * 100).toFixed(1)}% of the bytes, ${ratios.time.toFixed(3)}x the time`);
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) return void console.log(USAGE);
  const options = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const admin = await mysql.createConnection({ uri: options.serverUrl });
  const [[version]] = await admin.query<mysql.RowDataPacket[]>('select version() as v');
  const loadAverage = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  const machine: Record<string, string | number> = {
    cpu: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}`,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()}`,
    // The service's and the baseline's (--node); the bench itself and wrk's clients run on the bench's.
    node:
      execFileSync(options.node, ['--version'], { encoding: 'utf8' }).trim() +
      (options.node === process.execPath ? '' : ` (--node ${options.node}; the bench ${process.version})`),
    database: String(version!.v),
    'load average at start': loadAverage(),
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
    startedAt: new Date().toISOString(),
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
    for (const size of options.sizes) await benchSize({ options, admin, run }, size, size === largest);
  } finally {
    await admin.end();
  }
  run.finishedAt = new Date().toISOString();
  run.minutes = (performance.now() - started) / 60_000;
  run.machine['load average at end'] = loadAverage();
  const markdown = markdownReport(run);
  console.log(`\n${markdownTable(run)}\n\nTargets (valid rows only):\n${targets(run).join('\n')}`);
  const resultsDir = path.join(ROOT, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const stamp = run.startedAt.replace(/[:.]/g, '-');
  writeFileSync(path.join(resultsDir, `${stamp}.json`), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(path.join(resultsDir, `${stamp}.md`), `${markdown}\n`);
  if (options.docs) writeLatest(path.join(ROOT, 'docs/performance.md'), markdown);
  console.log(
    `\nWrote bench/results/${stamp}.json and .md${options.docs ? ' and docs/performance.md' : ''} (${run.minutes.toFixed(1)} min).`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

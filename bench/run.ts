/**
 * npm run bench (options: bench/options.ts): the built service and the raw baseline as processes, wrk
 * against both at once on one core until each row is stable; K through real Kong, W through the
 * dispatchers, S on the largest table; --before another checkout's service beside the data-layer rows.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import { checkoutLine, describeCheckout } from './options';
import { checkScenario } from './check';
import { kongUnavailable, startKong } from './kong';
import { linkUnavailable, openLink, type Link } from './link';
import { measureTogether, type Endpoint, type Measurement } from './measure';
import { parseOptions, USAGE, type Options } from './options';
import { databasePid, pin } from './measure';
import * as report from './report';
import * as scenarios from './scenarios';
import type { Scenario, Target } from './scenarios';
import { ROOT, startBaseline, startDispatcher, startService, type Server } from './servers';
import { compareSyncs, type SyncRun } from './sync';
import { prepareTable } from './tables';
import { benchWebhooks } from './webhooks';

const GATEWAY_SECRET = 'bench-gateway-secret-0123456789abcdef';
const log = (line: string) => console.log(line);
// On a shared core V8's parallel GC helpers wait for the other server's slice while the main thread waits for them.
const SHARED_CORE_FLAGS = ['--single-threaded-gc'];
const CPUS = os.cpus().length;

const describe = (m: Measurement) =>
  `${m.target} ${m.reqPerSec.toFixed(0)} req/s, p50 ${m.p50} ms, CPU µs/req ${JSON.stringify(m.cpuPerRequest)}, ${JSON.stringify(m.statuses)}${m.invalid ? `, INVALID: ${m.invalid}` : ''}`;

type Context = { options: Options; admin: mysql.Connection; run: report.RunResult };

async function benchSize({ options, admin, run }: Context, size: number, largest: boolean) {
  log(`\n== ${size.toLocaleString('en-US')} jobs ==`);
  const wants = (...keys: string[]) => options.scenarios.some((key) => keys.includes(key));
  const table = await prepareTable(options.serverUrl, size, { reseed: options.reseed, log });
  const before = options.before
    ? await prepareTable(options.serverUrl, size, { log, before: { root: options.before, like: table } })
    : undefined;
  run.tables.push({ size, rows: table.rows, seededSeconds: table.seededSeconds, ...(before && { before }) });
  const databases = [table, ...(before ? [before] : [])].map(({ url }) => new URL(url).pathname.slice(1));
  await admin.query(`use \`${databases[0]}\``);
  // Creates are removed after each window: every id made in this run is younger than its start.
  const createdFrom = Buffer.alloc(16);
  createdFrom.writeUIntBE(new Date(run.startedAt).getTime(), 0, 6);
  const removeCreates = async () => {
    const remove = 'delete from ??.jobs where id >= ? and created_by_consumer = ?';
    for (const db of databases) await admin.query(remove, [db, createdFrom, scenarios.BENCH_WRITER_ID]);
  };
  const { pool: poolSize, node } = options;
  const common = { poolSize, gatewaySecret: GATEWAY_SECRET, nodeFlags: SHARED_CORE_FLAGS, node };
  // W's receivers listen on loopback: allowed by name, as npm start allows them.
  const webhookEnv = {
    WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
  };
  const endpoints = new Map<Target, Endpoint>();
  const start = async (target: Target, server: Promise<Server>, through?: Server) => {
    const started = await server;
    endpoints.set(target, { target, server: started, chain: through ? [started, through] : [started] });
    return started;
  };
  const linkProblem = largest && wants('S') && options.linkRate ? linkUnavailable() : 'not asked';
  if (largest && wants('S') && options.linkRate && linkProblem) log(`S    on loopback only: ${linkProblem}`);
  const link: Link | undefined = linkProblem ? undefined : openLink(options.linkRate);
  try {
    const service = await start('service', startService(table.url, { ...common, env: wants('W') ? webhookEnv : {} }));
    await start('baseline', startBaseline(table.url, common));
    if (before) await start('before', startService(before.url, { ...common, name: 'before', root: options.before }));
    const noKong = wants('K', 'S') ? kongUnavailable() : undefined;
    if (noKong && wants('S')) log(`S    not run: ${noKong}`);
    // S needs only our configuration; across the link, the client reaches it at this host's end.
    const kongs = ['kong-bare', 'kong-key-auth', 'kong-bundled', 'kong-ours'] as const;
    for (const target of noKong ? [] : kongs.filter((k) => wants('K') || (k === 'kong-ours' && wants('S'))))
      await start(target, startKong(target, service.url, GATEWAY_SECRET, link ? '0.0.0.0' : undefined), service);
    const asked = await scenarios.scenariosFor(admin, options.scenarios, noKong);
    const results = new Map<Scenario, report.ScenarioResult>();
    for (const scenario of before ? scenarios.withBefore(asked) : asked) {
      const { key, title, comparison } = scenario;
      const result: report.ScenarioResult = {
        size,
        key,
        title,
        comparison,
        path: scenario.path,
        measurements: [],
        rounds: 0,
      };
      const reference = endpoints.get(comparison.reference)!.server;
      if (!scenario.unavailable && comparison.reference !== 'service') {
        const check = await checkScenario(scenario, service, reference, GATEWAY_SECRET);
        if (scenario.method === 'POST') await removeCreates();
        if ('unavailable' in check) scenario.unavailable = check.unavailable;
        else result.check = check;
      }
      result.unavailable = scenario.unavailable;
      results.set(scenario, result);
      run.scenarios.push(result);
      log(`${key} ${title} vs ${comparison.reference}: ${scenario.unavailable ?? result.check?.body ?? 'ready'}`);
    }
    const dbPid = databasePid();
    const targetsOf = ({ comparison: c }: Scenario) => [...new Set([...c.subjects, c.reference])];
    const measureRound = async (scenario: Scenario, round: number, seconds: number): Promise<Measurement[]> => {
      const load = (target: Target) => ({
        ...{ round, seconds, method: scenario.method, body: scenario.body, timeoutSeconds: 30, databasePid: dbPid },
        ...{ connections: options.connections, threads: options.threads },
        paths: scenario.ids ? scenario.ids.map((id) => `${scenario.path}${id}`) : [scenario.path],
        headers: scenarios.headersForTarget(scenario, target, GATEWAY_SECRET),
      });
      const list = targetsOf(scenario).map((target) => endpoints.get(target)!);
      const taken: Measurement[] = [];
      try {
        if (CPUS >= 2 && list.every((e) => e.chain.length === 1)) {
          // One process a side: both on the last core, as batch work, the generators on the others.
          const pids = list.flatMap((e) => e.server.pids());
          pin(pids, String(CPUS - 1), true);
          try {
            taken.push(...(await measureTogether(list, { ...load(list[0]!.target), cpus: `0-${CPUS - 2}` })));
          } finally {
            pin(pids, `0-${CPUS - 1}`, false);
          }
        } else {
          // In turn, each round starting with a different target, so none always runs on a warmer machine.
          for (const e of list.map((_, i) => list[(i + round) % list.length]!))
            taken.push(...(await measureTogether([e], load(e.target))));
        }
      } catch (error) {
        log(`  ${scenario.key.padEnd(4)} failed: ${(error as Error).message}`);
      }
      if (scenario.method === 'POST') await removeCreates();
      return taken;
    };
    const runnable = [...results.keys()].filter((s) => !s.unavailable);
    if (options.warmup > 0) log(`warm-up: ${options.warmup} s per scenario`);
    for (const scenario of options.warmup > 0 ? runnable : []) await measureRound(scenario, 0, options.warmup);
    const done = (scenario: Scenario) =>
      results.get(scenario)!.rounds >= options.rounds &&
      scenario.comparison.subjects.every((s) => report.settled(results.get(scenario)!, s, options.spread)?.stable);
    for (let round = 1; round <= options.maxRounds; round++) {
      const pending = runnable.filter((scenario) => !done(scenario));
      if (pending.length === 0) break;
      log(
        `round ${round} (${options.rounds} to ${options.maxRounds}): ${pending.map((s) => `${s.key} vs ${s.comparison.reference}`).join(', ')}`,
      );
      for (const scenario of pending) {
        const result = results.get(scenario)!;
        result.rounds = round;
        for (const m of await measureRound(scenario, round, options.duration)) {
          result.measurements.push(m);
          log(`  ${scenario.key.padEnd(4)} ${describe(m)}`);
        }
      }
    }
    if (wants('W')) {
      // A run that died before its clean-up left subscriptions to dead ports.
      await admin.query("delete from webhook_subscriptions where consumer_id like 'bench-hooks-%'");
      const result = await benchWebhooks({
        ...{ size, service, createBody: scenarios.CREATE_BODY, seconds: options.webhookSeconds, databasePid: dbPid },
        startDispatcher: () => startDispatcher(table.url, webhookEnv),
        subscriber: (n) => scenarios.identity({ id: `bench-hooks-${n + 1}`, groups: 'jobs:read' }, GATEWAY_SECRET),
        writerHeaders: scenarios.headersForTarget({ as: 'writer', method: 'POST' }, 'service', GATEWAY_SECRET),
      }).catch((error: Error) => void log(`W    failed: ${error.message}`));
      if (result) (run.webhooks ??= []).push(result);
      await removeCreates();
    }
    const kong = endpoints.get('kong-ours')?.server.url;
    const headers = { 'X-API-Key': scenarios.DEMO_READER_KEY };
    // Loopback first, then across the partner's link when there is one.
    for (const across of largest && wants('S') && kong ? [undefined, ...(link ? [link] : [])] : []) {
      const where = across ? `across a ${across.rate} link` : 'on loopback';
      const onRun = (r: SyncRun, gzip: boolean, warmup: boolean) =>
        log(`S    ${where} ${gzip ? 'gzip' : 'plain'}${warmup ? ' (warm-up)' : ''}: ${JSON.stringify(r)}`);
      const { plain, gzip } = across
        ? await across.compareSyncs(kong!.replace('127.0.0.1', across.hostAddress), headers, options.syncRounds, onRun)
        : await compareSyncs(kong!, headers, options.syncRounds, onRun);
      for (const runs of [plain, gzip])
        run.syncs.push({ size, target: 'kong-ours', gzip: runs === gzip, link: across?.rate, runs });
    }
  } finally {
    for (const { server } of [...endpoints.values()].reverse()) await server.stop();
    link?.close();
    await removeCreates().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) return void console.log(USAGE);
  const options = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const admin = await mysql.createConnection({ uri: options.serverUrl });
  const [[version]] = await admin.query<mysql.RowDataPacket[]>('select version() as v');
  const loadAverage = () => os.loadavg().join(' ');
  const node = execFileSync(options.node, ['--version'], { encoding: 'utf8' }).trim();
  const machine: Record<string, string | number> = {
    cpu: `${CPUS} x ${os.cpus()[0]?.model ?? 'unknown'}`,
    os: `${os.type()} ${os.release()}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    // The service's and the baseline's; the bench itself runs on the machine's.
    node: options.node === process.execPath ? node : `${node} (--node ${options.node}; the bench ${process.version})`,
    database: String(version!.v),
    'load average at start': loadAverage(),
    ...(options.note ? { note: options.note } : {}),
  };
  log(`Machine: ${JSON.stringify(machine)}`);
  const before = options.before ? describeCheckout(options.before) : undefined;
  if (before) log(`Before: ${checkoutLine(before)}`);
  const run: report.RunResult = {
    ...{ startedAt: new Date().toISOString(), finishedAt: '', minutes: 0, machine, before, options },
    ...{ tables: [], scenarios: [], syncs: [], webhooks: [] },
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
  const markdown = report.markdownReport(run);
  console.log(`\n${report.markdownTable(run)}\n\nTargets (valid rows only):\n${report.targets(run).join('\n')}`);
  const stamp = path.join(ROOT, 'bench/results', run.startedAt.replace(/[:.]/g, '-'));
  mkdirSync(path.dirname(stamp), { recursive: true });
  writeFileSync(`${stamp}.json`, `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(`${stamp}.md`, `${markdown}\n`);
  log(`\nWrote ${path.relative(ROOT, stamp)}.json and .md (${run.minutes.toFixed(1)} min).`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

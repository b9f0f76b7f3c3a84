/**
 * npm run bench [-- --sizes 10000,100000,1000000 --rounds 3 --duration 3 --warmup 2
 *                  --connections 16 --pool 10 --scenarios A,D --reseed --no-readme --note "..."]
 *
 * For each table size: the service (node dist/service/server.js, production logging), the raw
 * baseline (bench/baseline.ts), the local gateway and a bare proxy (bench/bare-proxy.ts, F's floor)
 * run as processes of their own, and
 * autocannon drives them from a fourth. Before timing, the baseline's answers are checked
 * byte for byte against the service's. Then a warm-up, and rounds in which the service and the
 * baseline take turns on each scenario. Prints req/s, p50, p99, the ratio to the baseline, CPU
 * per request and peak RSS (both from /proc) per scenario; writes bench/results/<time>.json and
 * .md and the README's latest table. It asserts nothing.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import { connectionOptions } from '../db/client';
import { checkScenario } from './check';
import type { LoadRequest, LoadResult } from './load';
import { cpuMicros, peakRss, resetPeakRss } from './proc';
import { markdownReport, markdownTable, targets, updateReadme, type Measurement, type RunResult, type ScenarioResult, type Target } from './report';
import { BENCH_WRITER_ID, DEMO_READER, DEMO_READER_KEY, headersFor, scenariosFor, type Scenario, type ScenarioKey } from './scenarios';
import { ROOT, startBareProxy, startBaseline, startGateway, startService, type Server } from './servers';
import { prepareTable } from './tables';

const ALL: ScenarioKey[] = ['A', 'B', 'C', "C'", 'D', 'E', 'G', 'F-A', 'F-D'];
// A scenario whose single request takes longer than this is timed one request at a time.
const SLOW_MS = 2500;
const GATEWAY_SECRET = 'bench-gateway-secret-0123456789abcdef';

interface Options {
  sizes: number[];
  rounds: number;
  duration: number;
  warmup: number;
  connections: number;
  pool: number;
  scenarios: ScenarioKey[];
  reseed: boolean;
  /** Whether the README's latest table is replaced (--no-readme: results/ only). */
  readme: boolean;
  note: string;
  serverUrl: string;
  argv: string;
}

const FLAGS = {
  sizes: { type: 'string' },
  rounds: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  connections: { type: 'string' },
  pool: { type: 'string' },
  scenarios: { type: 'string' },
  reseed: { type: 'boolean' },
  'no-readme': { type: 'boolean' },
  note: { type: 'string' },
} as const;
const USAGE =
  'npm run bench -- [--sizes 10000,100000,1000000] [--rounds 3] [--duration 3] [--warmup 2] [--connections 16] [--pool 10] [--scenarios A,B,...] [--reseed] [--no-readme] [--note text]';

function parseOptions(argv: string[]): Options {
  const options: Options = {
    sizes: [10_000, 100_000],
    rounds: 3,
    duration: 3,
    warmup: 2,
    connections: 16,
    pool: 10,
    scenarios: ALL,
    reseed: false,
    readme: true,
    note: process.env.BENCH_NOTE ?? '',
    serverUrl: process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306',
    argv: argv.map((arg) => (/^[\w.,=:/-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`)).join(' '),
  };
  const whole = (name: string, value: string | undefined, min: number) => {
    if (!value || !/^\d+$/.test(value) || Number(value) < min) throw new Error(`${name} takes a whole number >= ${min} (got "${value ?? ''}")`);
    return Number(value);
  };
  let parsed: ReturnType<typeof parseArgs<{ options: typeof FLAGS; strict: true }>>['values'];
  try {
    parsed = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new Error(`${(error as Error).message}. Usage: ${USAGE}`);
  }
  const { sizes, rounds, duration, warmup, connections, pool, scenarios, reseed, note } = parsed;
  if (sizes !== undefined) options.sizes = sizes.split(',').map((size) => whole('--sizes', size.trim(), 1));
  if (rounds !== undefined) options.rounds = whole('--rounds', rounds, 1);
  if (duration !== undefined) options.duration = whole('--duration', duration, 1);
  if (warmup !== undefined) options.warmup = whole('--warmup', warmup, 0);
  if (connections !== undefined) options.connections = whole('--connections', connections, 1);
  if (pool !== undefined) options.pool = whole('--pool', pool, 1);
  if (scenarios !== undefined) {
    const keys = scenarios.split(',').map((key) => key.trim());
    const unknown = keys.filter((key) => !ALL.includes(key as ScenarioKey));
    if (unknown.length) throw new Error(`--scenarios takes a comma list of ${ALL.join(', ')} (got ${unknown.join(', ')})`);
    options.scenarios = keys as ScenarioKey[];
  }
  if (reseed) options.reseed = true;
  if (parsed['no-readme']) options.readme = false;
  if (note !== undefined) options.note = note;
  return options;
}

/** The autocannon process, one request at a time over IPC. */
function loadGenerator(): { run(request: LoadRequest): Promise<LoadResult>; stop(): void } {
  const child: ChildProcess = fork(path.join(ROOT, 'dist/bench/load.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 0;
  const waiting = new Map<number, { resolve(result: LoadResult): void; reject(error: Error): void }>();
  child.on('message', (message: { id: number; result?: LoadResult; error?: string }) => {
    const waiter = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error) waiter?.reject(new Error(message.error));
    else waiter?.resolve(message.result!);
  });
  return {
    run: (request) =>
      new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        child.send({ id, request });
      }),
    stop: () => child.kill(),
  };
}

/** Waits until no statement of another session is running on the bench database (abandoned requests finish). */
async function quiet(admin: mysql.Connection, database: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const [[row]] = await admin.query<mysql.RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = ? AND command = 'Query' AND id <> CONNECTION_ID()",
      [database],
    );
    if (Number(row!.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const log = (line: string) => console.log(line);

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const started = performance.now();
  const startedAt = new Date();
  // Creates are removed after each timed run: every id from this run on is younger than this.
  const createdFrom = Buffer.alloc(16);
  createdFrom.writeUIntBE(startedAt.getTime(), 0, 6);

  const admin = await mysql.createConnection(connectionOptions(`${options.serverUrl.replace(/\/+$/, '')}/mysql`));
  const [[version]] = await admin.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
  const machine: Record<string, string | number> = {
    cpu: `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown'}`,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    database: String(version!.v),
    'load average at start': os.loadavg().map((l) => l.toFixed(2)).join(' '),
    ...(options.note ? { note: options.note } : {}),
  };
  log(`Machine: ${Object.entries(machine).map(([k, v]) => `${k}: ${v}`).join('; ')}`);

  const load = loadGenerator();
  const run: RunResult = {
    startedAt: startedAt.toISOString(),
    finishedAt: '',
    minutes: 0,
    machine,
    options: { ...options },
    tables: [],
    scenarios: [],
  };

  try {
    for (const size of options.sizes) {
      log(`\n== ${size.toLocaleString('en-US')} jobs ==`);
      const table = await prepareTable(options.serverUrl, size, { reseed: options.reseed, log });
      run.tables.push({ size, rows: table.rows, seededSeconds: table.seededSeconds });
      const database = new URL(table.url).pathname.slice(1);
      await admin.query(`USE \`${database}\``);
      const removeCreates = () => admin.query('DELETE FROM jobs WHERE id >= ? AND created_by_consumer = ?', [createdFrom, BENCH_WRITER_ID]);

      const servers: Server[] = [];
      try {
        const service = await startService(table.url, { poolSize: options.pool, gatewaySecret: GATEWAY_SECRET });
        servers.push(service);
        const baseline = await startBaseline(table.url, { poolSize: options.pool });
        servers.push(baseline);
        const wantsGateway = options.scenarios.some((key) => key.startsWith('F-'));
        const gateway = wantsGateway ? await startGateway(service, { gatewaySecret: GATEWAY_SECRET, apiKey: DEMO_READER_KEY }) : undefined;
        if (gateway) servers.push(gateway);
        // F's floor: what the cheapest proxy process costs on this machine (bench/bare-proxy.ts).
        const proxy = wantsGateway
          ? await startBareProxy(service, { gatewaySecret: GATEWAY_SECRET, consumerId: DEMO_READER.id, username: DEMO_READER.username, groups: DEMO_READER.groups })
          : undefined;
        if (proxy) servers.push(proxy);

        const scenarios = await scenariosFor(admin, service.url, GATEWAY_SECRET, options.scenarios);
        const results = new Map<Scenario, ScenarioResult>();
        const slow = new Set<Scenario>();
        // One request's time, unloaded (from the check): slower scenarios get longer windows.
        const latency = new Map<Scenario, number>();
        for (const scenario of scenarios) {
          const result: ScenarioResult = { size, key: scenario.key, title: scenario.title, path: scenario.path, unavailable: scenario.unavailable, measurements: [] };
          results.set(scenario, result);
          run.scenarios.push(result);
          if (scenario.unavailable) {
            log(`${scenario.key.padEnd(4)} n/a: ${scenario.unavailable}`);
            continue;
          }
          if (scenario.via === 'direct') {
            result.check = await checkScenario(scenario, service, baseline, { databaseUrl: table.url, gatewaySecret: GATEWAY_SECRET });
            if (scenario.method === 'POST') await removeCreates();
            latency.set(scenario, result.check.ms);
            if (result.check.ms > SLOW_MS) slow.add(scenario);
            log(`${scenario.key.padEnd(4)} ${scenario.title}: response ${result.check.body}; SQL ${result.check.sql}${slow.has(scenario) ? `; ${result.check.ms.toFixed(0)} ms a request: timed one at a time` : ''}`);
          }
        }
        // F follows its direct scenario into slow mode.
        for (const scenario of scenarios) {
          const direct = scenarios.find((s) => s.key === scenario.key.slice(2));
          if (scenario.via === 'gateway' && direct && slow.has(direct)) slow.add(scenario);
          if (scenario.via === 'gateway' && direct) latency.set(scenario, latency.get(direct) ?? 0);
        }

        const targetsOf = (scenario: Scenario, round: number): Array<{ target: Target; server: Server }> => {
          if (scenario.via === 'gateway') {
            if (!gateway || !proxy) return [];
            const pair: Array<{ target: Target; server: Server }> = [
              { target: 'gateway', server: gateway },
              { target: 'proxy', server: proxy },
            ];
            return round % 2 === 0 ? pair : pair.reverse();
          }
          const pair: Array<{ target: Target; server: Server }> = [
            { target: 'service', server: service },
            { target: 'baseline', server: baseline },
          ];
          // Turns alternate, so neither side always runs on a warmer (or more loaded) machine.
          return round % 2 === 0 ? pair : pair.reverse();
        };

        /**
         * At least `seconds`, and long enough for each connection to finish about five requests
         * when requests queue for the pool (at most 15 s): a window shorter than one request
         * would measure nothing.
         */
        const windowFor = (scenario: Scenario, seconds: number) =>
          Math.min(15, Math.max(seconds, Math.ceil((5 * (latency.get(scenario) ?? 0) * options.connections) / options.pool / 1000)));

        const measure = async (scenario: Scenario, target: Target, server: Server, round: number, seconds: number): Promise<Measurement> => {
          const processes: Array<[Target, Server]> = target === 'gateway' || target === 'proxy' ? [[target, server], ['service', service]] : [[target, server]];
          const cpuBefore = processes.map(([, s]) => cpuMicros(s.pid));
          for (const [, s] of processes) resetPeakRss(s.pid);
          const oneAtATime = slow.has(scenario);
          const result = await load.run({
            url: `${server.url}${scenario.ids ? '/' : scenario.path}`,
            method: scenario.method,
            headers: headersFor(scenario, GATEWAY_SECRET),
            body: scenario.body,
            idPath: scenario.ids ? scenario.path : undefined,
            ids: scenario.ids,
            connections: oneAtATime ? 1 : options.connections,
            ...(oneAtATime ? { amount: 2 } : { duration: windowFor(scenario, seconds) }),
            timeout: oneAtATime ? 120 : 30,
          });
          const cpuMicrosPerRequest: Measurement['cpuMicrosPerRequest'] = {};
          const peakRssBytes: Measurement['peakRssBytes'] = {};
          processes.forEach(([name, s], i) => {
            cpuMicrosPerRequest[name] = result.requests ? (cpuMicros(s.pid) - cpuBefore[i]!) / result.requests : NaN;
            peakRssBytes[name] = peakRss(s.pid);
          });
          await quiet(admin, database);
          if (scenario.method === 'POST') await removeCreates();
          return {
            ...result,
            round,
            target,
            mode: oneAtATime ? 'one at a time' : 'load',
            reqPerSec: result.seconds > 0 ? result.requests / result.seconds : 0,
            cpuMicrosPerRequest,
            peakRssBytes,
          };
        };

        if (options.warmup > 0) {
          log(`warm-up: ${options.warmup} s per scenario and server`);
          for (const scenario of scenarios) {
            if (scenario.unavailable || slow.has(scenario)) continue;
            for (const { target, server } of targetsOf(scenario, 0)) await measure(scenario, target, server, 0, options.warmup).catch(() => undefined);
          }
        }
        for (let round = 1; round <= options.rounds; round++) {
          log(`round ${round} of ${options.rounds}`);
          for (const scenario of scenarios) {
            if (scenario.unavailable) continue;
            for (const { target, server } of targetsOf(scenario, round)) {
              const m = await measure(scenario, target, server, round, options.duration).catch((error: Error) => {
                log(`  ${scenario.key.padEnd(4)} ${target.padEnd(8)} failed: ${error.message}`);
                return undefined;
              });
              if (!m) continue;
              results.get(scenario)!.measurements.push(m);
              const statuses = Object.entries(m.statuses).map(([code, n]) => `${code}:${n}`).join(' ');
              log(
                `  ${scenario.key.padEnd(4)} ${target.padEnd(8)} ${m.reqPerSec.toFixed(m.reqPerSec < 10 ? 2 : 0).padStart(7)} req/s  p50 ${m.p50.toFixed(2)} ms  p99 ${m.p99.toFixed(2)} ms  ` +
                  `${Object.entries(m.cpuMicrosPerRequest).map(([name, us]) => `${name} ${us.toFixed(0)} µs/req`).join(', ')}  [${statuses}${m.errors ? ` errors:${m.errors}` : ''}]`,
              );
            }
          }
        }
      } finally {
        for (const server of servers.reverse()) await server.stop();
        await removeCreates().catch(() => undefined);
      }
    }
  } finally {
    load.stop();
    await admin.end();
  }

  run.finishedAt = new Date().toISOString();
  run.minutes = (performance.now() - started) / 60_000;
  run.machine['load average at end'] = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  const markdown = markdownReport(run);
  console.log(`\n${markdownTable(run)}\n\nTargets (issue 10):\n${targets(run).join('\n')}`);
  const resultsDir = path.join(ROOT, 'bench/results');
  mkdirSync(resultsDir, { recursive: true });
  const stamp = run.startedAt.replace(/[:.]/g, '-');
  writeFileSync(path.join(resultsDir, `${stamp}.json`), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(path.join(resultsDir, `${stamp}.md`), `${markdown}\n`);
  const updated = options.readme && updateReadme(path.join(ROOT, 'README.md'), markdown);
  const readme = !options.readme ? ' (README.md left as it was: --no-readme)' : updated ? '; README.md "Performance" table updated' : ' (README.md has no bench:latest markers: not updated)';
  console.log(`\nWrote bench/results/${stamp}.json and .md${readme} (${run.minutes.toFixed(1)} min).`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});

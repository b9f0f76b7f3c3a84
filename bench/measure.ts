/**
 * One measurement: wrk (bench/wrk.lua) against each target of a row for a window, and the CPU time
 * every process involved used meanwhile (/proc). A window wrk may have limited is marked invalid.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Target } from './scenarios';
import type { Server } from './servers';

/** USER_HZ, the unit of utime/stime in /proc/<pid>/stat. */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;

/** The fields of /proc/<pid>/stat after the command name (in parentheses, which may hold spaces). */
export const statFields = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};

/** CPU time (user + system, every thread) the process has used so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const fields = statFields(pid);
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS;
}

/** CPU time the whole machine has spent busy (everything but idle and iowait) so far, in microseconds. */
export function machineBusyMicros(): number {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return ((ticks.reduce((sum, n) => sum + n, 0) - ticks[3]! - ticks[4]!) * 1e6) / TICKS;
}

/** The processes for which `test` holds (processes that end meanwhile are left out). */
export function processes(test: (pid: number) => boolean): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return test(pid);
      } catch {
        return false;
      }
    });
}

/** The database server's process id (mariadbd or mysqld), when it runs on this machine. */
export const databasePid = (): number | undefined =>
  processes((pid) => ['mariadbd', 'mysqld'].includes(readFileSync(`/proc/${pid}/comm`, 'utf8').trim()))[0];

/**
 * Lets every thread of each process run only on `cpus` (taskset's list), as batch work while they
 * share a core (no preemption on every wake-up: two servers on one core switch every few
 * milliseconds, not every request); `shared: false` undoes it.
 */
export function pin(pids: number[], cpus: string, shared: boolean): void {
  for (const pid of pids) {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    execFileSync('chrt', [shared ? '-b' : '-o', '-a', '-p', '0', String(pid)], { stdio: 'ignore' });
  }
}

/** `paths`: connections cycle through them (get by id: one per id); `cpus`: taskset's list for wrk. */
export interface LoadRequest {
  origin: string;
  method: 'GET' | 'POST';
  paths: string[];
  headers: Record<string, string>;
  body?: string;
  connections: number;
  threads: number;
  seconds: number;
  timeoutSeconds: number;
  cpus?: string;
}

export type LoadResult = ReturnType<typeof parseResult>;
const SCRIPT = [path.join(__dirname, 'wrk.lua'), path.join(__dirname, '..', '..', 'bench', 'wrk.lua')].find((file) =>
  existsSync(file),
)!;

/** The share of its threads' time wrk was on a CPU (a starved wrk shows as throughput and CPU ratios that disagree). */
export const generatorBusy = ({ seconds, generator }: Pick<LoadResult, 'seconds' | 'generator'>) =>
  seconds > 0 ? generator.cpuMicros / (seconds * 1e6 * generator.threads) : 0;
export const saturated = (result: Pick<LoadResult, 'seconds' | 'generator'>) => generatorBusy(result) >= 0.8;
/** A Lua string literal of any bytes (printable ASCII as is, everything else as \ddd). */
const luaByte = (b: number) =>
  b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b).padStart(3, '0')}`;
const luaString = (text: string) => `"${[...Buffer.from(text, 'utf8')].map(luaByte).join('')}"`;

/** The Lua chunk bench/wrk.lua loads: the whole HTTP/1.1 requests (keep-alive, the body's length stated). */
function requestsChunk({ origin, method, paths, headers, body }: LoadRequest): string {
  const head = [`Host: ${new URL(origin).host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== undefined) head.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const all = paths.map((p) => luaString(`${method} ${p} HTTP/1.1\r\n${head.join('\r\n')}\r\n\r\n${body ?? ''}`));
  return `return {\n${all.join(',\n')}\n}\n`;
}

/** wrk's BENCH_RESULT line (bench/wrk.lua's done()): latencies in ms (-1: no answer), and wrk's own CPU and wait for one. */
function parseResult(stdout: string, threads: number) {
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (!line) throw new Error(`wrk printed no result: ${stdout.trim().slice(-500)}`);
  const raw = JSON.parse(line.slice('BENCH_RESULT '.length)) as Record<string, number> & {
    statuses: Record<string, number>;
  };
  const answered = Object.values(raw.statuses).reduce((sum, n) => sum + n, 0);
  return {
    requests: answered,
    seconds: raw.microseconds! / 1e6,
    p50: answered ? raw.p50! / 1000 : -1,
    p99: answered ? raw.p99! / 1000 : -1,
    statuses: raw.statuses,
    errors: raw.connect! + raw.read! + raw.write!,
    timeouts: raw.timeout!,
    bytes: raw.bytes!,
    generator: { cpuMicros: raw.cpuTicks! < 0 ? NaN : (raw.cpuTicks! * 1e6) / TICKS, threads },
  };
}

export function runLoad(request: LoadRequest): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'));
  const requestsFile = path.join(dir, 'requests.lua');
  writeFileSync(requestsFile, requestsChunk(request));
  const { threads, connections, seconds, timeoutSeconds, cpus, origin } = request;
  const args = `-t${threads} -c${Math.max(connections, threads)} -d${seconds}s --timeout ${timeoutSeconds}s -s`;
  const wrk = ['wrk', ...args.split(' '), SCRIPT, origin, '--', requestsFile];
  const [command, ...argv] = cpus ? ['taskset', '-c', cpus, ...wrk] : wrk;
  const ran = new Promise<string>((resolve, reject) => {
    execFile(command!, argv, { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      rmSync(dir, { recursive: true, force: true });
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT')
        return reject(new Error('wrk is not installed (Debian: apt-get install wrk)'));
      if (error) return reject(new Error(`wrk failed: ${stderr.trim() || error.message}`));
      resolve(stdout);
    });
  });
  return ran.then((stdout) => parseResult(stdout, threads));
}

/** A target and the servers a request to it passes through (their CPU is its cost). */
export type Endpoint = { target: Target; server: Server; chain: Server[] };

/**
 * `cpuPerRequest`: µs per answer of each server, wrk and the database; `cores`: each server's busy
 * share of a core (1.0: at its limit); `otherCores`: what processes outside the measurement used.
 */
export type Measurement = Awaited<ReturnType<typeof measureTogether>>[number];

const processCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);

/**
 * Measures endpoints at once, each with its own wrk and the same request mix, each one's servers on
 * their own. The database's CPU cannot be told apart between them: each gets its share by answers.
 */
export async function measureTogether(
  endpoints: Endpoint[],
  options: Omit<LoadRequest, 'origin'> & { round: number; databasePid?: number },
) {
  const servers = () => endpoints.map((e) => e.chain.map((s) => processCpu(s.pids())));
  const database = () => (options.databasePid ? cpuMicros(options.databasePid) : NaN);
  const before = { servers: servers(), database: database(), machine: machineBusyMicros(), at: performance.now() };
  const results = await Promise.all(endpoints.map((e) => runLoad({ ...options, origin: e.server.url })));
  const wall = (performance.now() - before.at) * 1000;
  const used = servers().map((chain, i) => chain.map((cpu, j) => cpu - before.servers[i]![j]!));
  const db = database() - before.database;
  const generators = results.reduce((sum, r) => sum + r.generator.cpuMicros, 0);
  const ours = used.flat().reduce((a, b) => a + b, 0) + generators + (Number.isFinite(db) ? db : 0);
  const otherCores = Math.max(0, (machineBusyMicros() - before.machine - ours) / wall);
  const answered = results.reduce((sum, r) => sum + r.requests, 0);
  return endpoints.map((endpoint, i) => {
    const { generator, ...load } = results[i]!;
    const per = (micros: number) => (load.requests > 0 ? micros / load.requests : NaN);
    const cpuPerRequest: Record<string, number> = { generator: per(generator.cpuMicros) };
    const cores: Record<string, number> = {};
    endpoint.chain.forEach((s, j) => {
      cpuPerRequest[s.name] = per(used[i]![j]!);
      cores[s.name] = used[i]![j]! / wall;
    });
    if (Number.isFinite(db) && answered > 0) cpuPerRequest.database = per((db * load.requests) / answered);
    const busy = generatorBusy(results[i]!);
    const invalid =
      load.requests === 0
        ? 'no answer'
        : saturated(results[i]!)
          ? `load generator saturated (${(busy * 100).toFixed(0)}% busy)`
          : undefined;
    return {
      ...load,
      round: options.round,
      target: endpoint.target,
      together: endpoints.length > 1 ? true : undefined,
      reqPerSec: load.seconds > 0 ? load.requests / load.seconds : 0,
      cpuPerRequest,
      chainCpuPerRequest: per(used[i]!.reduce((a, b) => a + b, 0)),
      cores,
      generatorBusy: busy,
      otherCores,
      invalid,
    };
  });
}

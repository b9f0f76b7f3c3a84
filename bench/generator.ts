/**
 * The load generator: wrk (Debian's `wrk`, C, one event loop per thread) with bench/wrk.lua, in a
 * process of its own. It costs a few microseconds a request where the servers cost hundreds, and it
 * reports the CPU time it used itself, so every measurement says whether the generator could have
 * been what limited it (see `saturated`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clockTicks } from './proc';

export interface LoadRequest {
  /** Scheme, host and port. */
  origin: string;
  method: 'GET' | 'POST';
  /** Paths with their queries; connections cycle through them (get by id: one per sampled id). */
  paths: string[];
  headers: Record<string, string>;
  body?: string;
  connections: number;
  threads: number;
  seconds: number;
  /** Seconds one request may take before wrk counts it as a timeout. */
  timeoutSeconds: number;
  /** CPUs wrk may run on (taskset's list, e.g. "0"); any when absent. */
  cpus?: string;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  /** Latencies in ms (wrk's histogram has microsecond steps); -1 when nothing was answered. */
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  /** Connect, read and write errors. */
  errors: number;
  timeouts: number;
  bytes: number;
  /** wrk's CPU time, and the time its threads were ready to run but waited for a CPU (schedstat). */
  generator: { cpuMicros: number; waitMicros: number; threads: number };
}

/** bench/wrk.lua, from bench/ (ts-jest) or dist/bench/ (compiled). */
const SCRIPT = [path.join(__dirname, 'wrk.lua'), path.join(__dirname, '..', '..', 'bench', 'wrk.lua')].find((file) =>
  existsSync(file),
)!;

/** A generator whose threads were busy this share of the window or more was the bottleneck. */
export const SATURATED_SHARE = 0.8;

/**
 * The share of its threads' time the generator was on a CPU or waiting for one: a generator that
 * waits for a CPU limits the rate as surely as one that uses all of it.
 */
export function generatorBusy(result: Pick<LoadResult, 'seconds' | 'generator'>): number {
  const { cpuMicros, waitMicros, threads } = result.generator;
  return result.seconds > 0
    ? (cpuMicros + (Number.isFinite(waitMicros) ? waitMicros : 0)) / (result.seconds * 1e6 * threads)
    : 0;
}

export function saturated(result: Pick<LoadResult, 'seconds' | 'generator'>): boolean {
  return generatorBusy(result) >= SATURATED_SHARE;
}

/** A Lua string literal of any bytes (printable ASCII as is, everything else as \ddd). */
export function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    const printable = byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
    out += printable ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** The Lua chunk bench/wrk.lua loads: the list of whole HTTP/1.1 requests (keep-alive, the body's length stated). */
export function requestsChunk({ origin, method, paths, headers, body }: LoadRequest): string {
  const head = [
    `Host: ${new URL(origin).host}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  if (body !== undefined) head.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const formatted = paths.map((p) => luaString(`${method} ${p} HTTP/1.1\r\n${head.join('\r\n')}\r\n\r\n${body ?? ''}`));
  return `return {\n${formatted.join(',\n')}\n}\n`;
}

/** Reads wrk's BENCH_RESULT line (printed by bench/wrk.lua's done()). */
export function parseResult(stdout: string, threads: number, waitMicros = NaN): LoadResult {
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (!line) throw new Error(`wrk printed no result: ${stdout.trim().slice(-500)}`);
  const raw = JSON.parse(line.slice('BENCH_RESULT '.length)) as {
    requests: number;
    microseconds: number;
    bytes: number;
    connect: number;
    read: number;
    write: number;
    timeout: number;
    p50: number;
    p99: number;
    cpuTicks: number;
    statuses: Record<string, number>;
  };
  const answered = Object.values(raw.statuses).reduce((sum, n) => sum + n, 0);
  return {
    requests: answered,
    seconds: raw.microseconds / 1e6,
    p50: answered ? raw.p50 / 1000 : -1,
    p99: answered ? raw.p99 / 1000 : -1,
    statuses: raw.statuses,
    errors: raw.connect + raw.read + raw.write,
    timeouts: raw.timeout,
    bytes: raw.bytes,
    generator: { cpuMicros: raw.cpuTicks < 0 ? NaN : (raw.cpuTicks * 1e6) / clockTicks(), waitMicros, threads },
  };
}

export function runLoad(request: LoadRequest): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'));
  const requestsFile = path.join(dir, 'requests.lua');
  writeFileSync(requestsFile, requestsChunk(request));
  const args = [
    `-t${request.threads}`,
    `-c${Math.max(request.connections, request.threads)}`,
    `-d${request.seconds}s`,
    `--timeout`,
    `${request.timeoutSeconds}s`,
    '-s',
    SCRIPT,
    request.origin,
    '--',
    requestsFile,
  ];
  const [command, ...argv] = request.cpus ? ['taskset', '-c', request.cpus, 'wrk', ...args] : ['wrk', ...args];
  return new Promise<LoadResult>((resolve, reject) => {
    const child = execFile(command!, argv, { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      clearInterval(sampling);
      rmSync(dir, { recursive: true, force: true });
      if (error) {
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        return reject(
          new Error(
            missing
              ? 'wrk is not installed (Debian: apt-get install wrk)'
              : `wrk failed: ${stderr.trim() || error.message}`,
          ),
        );
      }
      try {
        resolve(
          parseResult(stdout, request.threads, waits.size ? [...waits.values()].reduce((a, b) => a + b, 0) : NaN),
        );
      } catch (parseError) {
        reject(parseError as Error);
      }
    });
    // A thread's schedstat goes when the thread ends, so it is read while wrk runs (taskset execs wrk: same pid).
    const waits = new Map<string, number>();
    const sampling = setInterval(() => child.pid && readWaits(child.pid, waits), WAIT_SAMPLE_MS);
  });
}

const WAIT_SAMPLE_MS = 100;

/** Adds each thread's time waiting for a CPU (the second field of /proc/<pid>/task/<tid>/schedstat, ns) to `waits`, by thread. */
export function readWaits(pid: number, waits: Map<string, number>): void {
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/);
      const wait = Number(fields[1]) / 1000;
      if (Number.isFinite(wait)) waits.set(tid, wait);
    }
  } catch {
    // the process or a thread ended meanwhile
  }
}

/**
 * One measurement: wrk against one target for a window, with the CPU time every process involved
 * used meanwhile (/proc), the generator's own, the database server's, and what the rest of the
 * machine used. A measurement the generator may have limited is kept but marked invalid.
 */
import { performance } from 'node:perf_hooks';
import { generatorBusy, runLoad, saturated, type LoadRequest, type LoadResult } from './generator';
import { cpuMicros, machineBusyMicros, peakRss, resetPeakRss } from './proc';
import type { Comparison, Target } from './scenarios';
import type { Server } from './servers';

/** A target and the servers a request to it passes through (their CPU is its cost). */
export interface Endpoint {
  target: Target;
  server: Server;
  chain: Server[];
}

export interface Measurement extends Omit<LoadResult, 'generator'> {
  round: number;
  target: Target;
  mode: 'load' | 'one at a time';
  /** 2xx answers. */
  good: number;
  reqPerSec: number;
  goodPerSec: number;
  /** CPU microseconds per counted request (every answer, or only 2xx for goodput): per server, generator, database. */
  cpuPerRequest: Record<string, number>;
  /** The sum over the target's chain of servers. */
  chainCpuPerRequest: number;
  /** Cores each server of the chain kept busy during the window (1.0: a node process at its limit). */
  cores: Record<string, number>;
  peakRssBytes: Record<string, number>;
  /** Share of the generator's threads' time it was on the CPU. */
  generatorBusy: number;
  /** Cores' worth of CPU used during the window by processes outside the measurement. */
  otherCores: number;
  /** Why the measurement does not count, when it does not. */
  invalid?: string;
}

export interface MeasureOptions extends Omit<LoadRequest, 'origin'> {
  round: number;
  origin?: string;
  mode: Measurement['mode'];
  counts: Comparison['counts'];
  databasePid?: number;
}

const processCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);

export async function measure(endpoint: Endpoint, options: MeasureOptions): Promise<Measurement> {
  const servers = endpoint.chain;
  const before = servers.map((s) => processCpu(s.pids()));
  const databaseBefore = options.databasePid ? cpuMicros(options.databasePid) : NaN;
  const machineBefore = machineBusyMicros();
  for (const s of servers) for (const pid of s.pids()) resetPeakRss(pid);
  const started = performance.now();
  const result = await runLoad({
    origin: options.origin ?? endpoint.server.url,
    method: options.method,
    paths: options.paths,
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    threads: options.threads,
    seconds: options.seconds,
    timeoutSeconds: options.timeoutSeconds,
  });
  const wallMicros = (performance.now() - started) * 1000;
  const used = servers.map((s, i) => processCpu(s.pids()) - before[i]!);
  const database = options.databasePid ? cpuMicros(options.databasePid) - databaseBefore : NaN;
  const machine = machineBusyMicros() - machineBefore;

  const good = Object.entries(result.statuses).reduce((sum, [code, n]) => sum + (code.startsWith('2') ? n : 0), 0);
  const counted = options.counts === 'good' ? good : result.requests;
  const per = (micros: number) => (counted > 0 ? micros / counted : NaN);
  const cpuPerRequest: Record<string, number> = {};
  const cores: Record<string, number> = {};
  servers.forEach((s, i) => {
    cpuPerRequest[s.name] = per(used[i]!);
    cores[s.name] = used[i]! / wallMicros;
  });
  cpuPerRequest.generator = per(result.generator.cpuMicros);
  if (Number.isFinite(database)) cpuPerRequest.database = per(database);
  const peakRssBytes: Record<string, number> = {};
  for (const s of servers) peakRssBytes[s.name] = s.pids().reduce((sum, pid) => sum + peakRss(pid), 0);
  const ours = used.reduce((a, b) => a + b, 0) + result.generator.cpuMicros + (Number.isFinite(database) ? database : 0);

  const { generator: _generator, ...load } = result;
  const busy = generatorBusy(result);
  const invalid =
    counted === 0
      ? options.counts === 'good'
        ? 'no 2xx answer'
        : 'no answer'
      : saturated(result) && options.mode === 'load'
        ? `load generator saturated (${(busy * 100).toFixed(0)}% busy)`
        : undefined;
  return {
    ...load,
    round: options.round,
    target: endpoint.target,
    mode: options.mode,
    good,
    reqPerSec: result.seconds > 0 ? result.requests / result.seconds : 0,
    goodPerSec: result.seconds > 0 ? good / result.seconds : 0,
    cpuPerRequest,
    chainCpuPerRequest: per(used.reduce((a, b) => a + b, 0)),
    cores,
    peakRssBytes,
    generatorBusy: busy,
    otherCores: Math.max(0, (machine - ours) / wallMicros),
    ...(invalid ? { invalid } : {}),
  };
}

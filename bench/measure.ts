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
  /** Measured at the same time as the other side of its comparison, on the same core. */
  together?: boolean;
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

/** What /proc said before a window: each chain's servers, the database, the machine. */
interface Before {
  servers: number[][];
  database: number;
  machine: number;
  started: number;
}

function begin(endpoints: Endpoint[], databasePid: number | undefined): Before {
  const servers = endpoints.map((e) => e.chain.map((s) => processCpu(s.pids())));
  for (const e of endpoints) for (const s of e.chain) for (const pid of s.pids()) resetPeakRss(pid);
  return {
    servers,
    database: databasePid ? cpuMicros(databasePid) : NaN,
    machine: machineBusyMicros(),
    started: performance.now(),
  };
}

/**
 * Measures one endpoint, or several at once (`together`): each gets its own wrk with the same
 * request mix, and each one's servers are measured on their own. The database's CPU cannot be
 * told apart between endpoints measured together: each is given its share by answers.
 */
export async function measure(endpoint: Endpoint, options: MeasureOptions): Promise<Measurement> {
  return (await measureTogether([endpoint], options))[0]!;
}

export async function measureTogether(endpoints: Endpoint[], options: MeasureOptions): Promise<Measurement[]> {
  const before = begin(endpoints, options.databasePid);
  const results = await Promise.all(
    endpoints.map((endpoint) => runLoad({ ...options, origin: options.origin ?? endpoint.server.url })),
  );
  const wallMicros = (performance.now() - before.started) * 1000;
  const used = endpoints.map((e, i) => e.chain.map((s, j) => processCpu(s.pids()) - before.servers[i]![j]!));
  const database = options.databasePid ? cpuMicros(options.databasePid) - before.database : NaN;
  const machine = machineBusyMicros() - before.machine;
  const generators = results.reduce((sum, r) => sum + r.generator.cpuMicros, 0);
  const ours = used.flat().reduce((a, b) => a + b, 0) + generators + (Number.isFinite(database) ? database : 0);
  const otherCores = Math.max(0, (machine - ours) / wallMicros);
  const answered = results.reduce((sum, r) => sum + r.requests, 0);
  return endpoints.map((endpoint, i) =>
    finish(
      endpoint,
      options,
      results[i]!,
      used[i]!,
      answered > 0 ? (database * results[i]!.requests) / answered : NaN,
      wallMicros,
      otherCores,
      endpoints.length > 1,
    ),
  );
}

function finish(
  endpoint: Endpoint,
  options: MeasureOptions,
  result: LoadResult,
  used: number[],
  database: number,
  wallMicros: number,
  otherCores: number,
  together: boolean,
): Measurement {
  const servers = endpoint.chain;
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

  const { generator: _generator, ...load } = result;
  const busy = generatorBusy(result);
  const invalid =
    counted === 0
      ? options.counts === 'good'
        ? 'no 2xx answer'
        : 'no answer'
      : saturated(result) && options.mode === 'load'
        ? `load generator saturated (${(busy * 100).toFixed(0)}% on or waiting for a CPU)`
        : undefined;
  return {
    ...load,
    round: options.round,
    target: endpoint.target,
    mode: options.mode,
    ...(together ? { together: true } : {}),
    good,
    reqPerSec: result.seconds > 0 ? result.requests / result.seconds : 0,
    goodPerSec: result.seconds > 0 ? good / result.seconds : 0,
    cpuPerRequest,
    chainCpuPerRequest: per(used.reduce((a, b) => a + b, 0)),
    cores,
    peakRssBytes,
    generatorBusy: busy,
    otherCores,
    ...(invalid ? { invalid } : {}),
  };
}

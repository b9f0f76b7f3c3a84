/**
 * One measurement: wrk against one target for a window, with the CPU time every process involved
 * used meanwhile (/proc), the generator's own, the database server's, and what the rest of the
 * machine used. A measurement the generator may have limited is kept but marked invalid.
 */
import { performance } from 'node:perf_hooks';
import { generatorBusy, runLoad, saturated, type LoadRequest, type LoadResult } from './generator';
import { cpuMicros, machineBusyMicros } from './proc';
import type { Target } from './scenarios';
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
  /** Measured at the same time as the other side of its comparison, on the same core. */
  together?: boolean;
  reqPerSec: number;
  /** CPU microseconds per answer: per server, generator, database. */
  cpuPerRequest: Record<string, number>;
  /** The sum over the target's chain of servers. */
  chainCpuPerRequest: number;
  /** Cores each server of the chain kept busy during the window (1.0: a node process at its limit). */
  cores: Record<string, number>;
  /** Share of the generator's threads' time it was on a CPU or waiting for one. */
  generatorBusy: number;
  /** Cores' worth of CPU used during the window by processes outside the measurement. */
  otherCores: number;
  /** Why the measurement does not count, when it does not. */
  invalid?: string;
}

export interface MeasureOptions extends Omit<LoadRequest, 'origin'> {
  round: number;
  databasePid?: number;
}

const processCpu = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);

/**
 * Measures endpoints at once, each with its own wrk and the same request mix, each one's servers on
 * their own. The database's CPU cannot be told apart between them: each gets its share by answers.
 */
export async function measureTogether(endpoints: Endpoint[], options: MeasureOptions): Promise<Measurement[]> {
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
          ? `load generator saturated (${(busy * 100).toFixed(0)}% on or waiting for a CPU)`
          : undefined;
    return {
      ...load,
      round: options.round,
      target: endpoint.target,
      ...(endpoints.length > 1 ? { together: true } : {}),
      reqPerSec: load.seconds > 0 ? load.requests / load.seconds : 0,
      cpuPerRequest,
      chainCpuPerRequest: per(used[i]!.reduce((a, b) => a + b, 0)),
      cores,
      generatorBusy: busy,
      otherCores,
      ...(invalid ? { invalid } : {}),
    };
  });
}

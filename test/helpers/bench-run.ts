import type { Measurement } from '../../bench/measure';
import { parseOptions } from '../../bench/options';
import type { RunResult } from '../../bench/report';
import type { Target } from '../../bench/scenarios';

/** A bench run's record around the given results, with the bench's default options: what its report reads. */
export function benchRun(
  size: number,
  results: Partial<Pick<RunResult, 'scenarios' | 'syncs' | 'webhooks'>>,
): RunResult {
  return {
    startedAt: '2026-11-25T00:00:00.000Z',
    finishedAt: '',
    minutes: 1,
    machine: {},
    options: parseOptions([], {}),
    tables: [{ size, rows: size, seededSeconds: 0 }],
    scenarios: [],
    syncs: [],
    ...results,
  };
}

/** One measured window of a target, with what a test varies in `extra`. */
export function benchWindow(
  target: Target,
  round: number,
  [reqPerSec, cpu]: [number, number],
  extra: Partial<Measurement> = {},
): Measurement {
  const requests = reqPerSec * 5;
  return {
    round,
    target,
    requests,
    seconds: 5,
    reqPerSec,
    p50: 8,
    p99: 20,
    statuses: { '200': requests },
    errors: 0,
    timeouts: 0,
    bytes: requests * 1000,
    cpuPerRequest: { [target]: cpu, generator: 12 },
    cores: { [target]: (reqPerSec * cpu) / 1e6 },
    chainCpuPerRequest: cpu,
    generatorBusy: 0.05,
    otherCores: 0.02,
    together: undefined,
    invalid: undefined,
    ...extra,
  };
}

import type { RunResult } from '../../bench/report';

/** A bench run's record around the given results, with the bench's default options: what its report reads. */
export function benchRun(size: number, results: Partial<Pick<RunResult, 'scenarios' | 'syncs' | 'webhooks'>>): RunResult {
  return {
    startedAt: '2026-11-25T00:00:00.000Z',
    finishedAt: '',
    minutes: 1,
    machine: {},
    options: { spread: 5, rounds: 3, maxRounds: 10, duration: 5, connections: 16, warmup: 2, pool: 10 },
    tables: [{ size, rows: size, seededSeconds: 0 }],
    scenarios: [],
    syncs: [],
    ...results,
  };
}

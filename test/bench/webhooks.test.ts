/**
 * How scenario W turns arrivals into figures (bench/webhooks.ts) and holds them to the targets
 * (bench/report.ts): each delivery against the commit of its change, repeats and strays left out,
 * the worst subscription's own percentiles, and a busy machine leaves a target undecided.
 */
import { targets, type RunResult } from '../../bench/report';
import { performance } from 'node:perf_hooks';
import {
  arrivalsIn,
  drained,
  matchDeliveries,
  percentile,
  worstSubscription,
  type DesignResult,
  type WebhookResult,
} from '../../bench/webhooks';
import { benchRun } from '../helpers/bench-run';

test('percentiles are nearest-rank over the sorted values', () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  expect(percentile(values, 50)).toBe(50);
  expect(percentile(values, 99)).toBe(99);
  expect(percentile(values, 100)).toBe(100);
  expect(percentile([7], 99)).toBe(7);
  expect(percentile([], 50)).toBeNaN();
});

test('each receiver first arrival per job is measured from that job commit; repeats and jobs of other phases are not', () => {
  const committed = new Map([
    ['job-a', 1000],
    ['job-b', 2000],
  ]);
  const one = new Map([
    ['job-a', [1100, 1900]],
    ['job-b', [2400]],
    ['earlier-job', [500]],
  ]);
  const two = new Map([['job-a', [1300]]]);
  const summary = matchDeliveries(committed, [one, two]);
  expect(summary).toMatchObject({ delivered: 3, expected: 4, repeats: 1, p50: 300, p99: 400, max: 400 });
  // Three deliveries between the first commit (1000) and the last first arrival (2400).
  expect(summary.perSecond).toBeCloseTo(3000 / 1400, 6);
});

test('arrivals in a window count every arrival, repeats included; the worst subscription is judged on its own percentiles, a missing delivery as never', () => {
  const one = new Map([
    ['job-a', [900, 1500]],
    ['job-b', [1999, 2000]],
  ]);
  const two = new Map([['job-a', [1200, 1800]]]);
  // 1500, 1999, 1200 and 1800 are in [1000, 2000).
  expect(arrivalsIn([one, two], 1000, 2000)).toBe(4);
  const committed = new Map([
    ['job-a', 800],
    ['job-b', 1900],
  ]);
  expect(worstSubscription(committed, [one])).toEqual({ p50: 99, p99: 100 });
  expect(worstSubscription(committed, [one, two])).toEqual({ p50: 400, p99: Infinity });
});

test('catching up means every change committed over settledMs ago has arrived, including the ones made while catching up', async () => {
  const now = performance.now();
  const backlog = new Map([['job-old', now - 5000]]);
  const during = new Map([['job-during', now - 2000]]);
  const fresh = new Map([['job-fresh', now - 10]]);
  const receiver = { arrivals: new Map([['job-old', [now - 4000]]]) };
  // job-during committed 2 s ago and has not arrived: not caught up, so the wait runs to its end.
  let started = performance.now();
  await drained([receiver], [backlog, during, fresh], 300, 1000);
  expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  // Once it arrives, the wait ends at once; job-fresh (10 ms old) is not waited for.
  receiver.arrivals.set('job-during', [now]);
  started = performance.now();
  await drained([receiver], [backlog, during, fresh], 5000, 1000);
  expect(performance.now() - started).toBeLessThan(1000);
});

const design = (
  name: DesignResult['design'],
  cpuPerEventMs: number,
  worst: Partial<DesignResult> = {},
  latency: Partial<DesignResult['latency']> = {},
): DesignResult => ({
  design: name,
  changes: 30,
  failedChanges: 0,
  latency: {
    delivered: 30_000,
    expected: 30_000,
    repeats: 0,
    p50: 300,
    p99: 900,
    max: 1200,
    perSecond: 1000,
    ...latency,
  },
  worstP50: 400,
  worstP99: 1500,
  arrivals: 30_000,
  cpuMs: { dispatchers: cpuPerEventMs * 20_000, database: cpuPerEventMs * 10_000 },
  cpuPerEventMs,
  ...worst,
});

function result(designs: DesignResult[], otherCores = 0.05): WebhookResult {
  return { size: 10_000, subscriptions: 1000, rate: 1, seconds: 30, otherCores, loadAverage: '0.5 0.5 0.5', designs };
}

const runOf = (w: WebhookResult): RunResult => benchRun(10_000, { webhooks: [w] });
const lines = (w: WebhookResult) => targets(runOf(w)).filter((line) => line.includes('W '));

test('W targets: met on a quiet machine, NOT met when a subscription is late, a delivery missing, or the cost over half of today', () => {
  expect(lines(result([design('fenced', 0.2), design('today', 0.5)]))).toEqual([
    expect.stringMatching(/^- met: W commit to delivery/),
    expect.stringMatching(/^- met: W CPU per delivered event/),
  ]);
  expect(lines(result([design('fenced', 0.3, { worstP99: 5200 }), design('today', 0.5)]))).toEqual([
    expect.stringMatching(/^- NOT met: W commit/),
    expect.stringMatching(/^- NOT met: W CPU .*0\.300 ms vs 0\.500 ms/),
  ]);
  expect(lines(result([design('fenced', 0.2, { worstP50: 1100 }), design('today', 0.5)]))[0]).toMatch(
    /^- NOT met: W commit/,
  );
  expect(lines(result([design('fenced', 0.2, {}, { delivered: 29_999 }), design('today', 0.5)]))[0]).toMatch(
    /^- NOT met: W commit .*29999 of 30000/,
  );
});

test("W targets: undecided on a busy machine or without today's design measured", () => {
  expect(lines(result([design('fenced', 0.2), design('today', 0.5)], 0.6))).toEqual([
    expect.stringMatching(/^- undecided \(machine busy \(0\.60 other cores\)\): W commit/),
    expect.stringMatching(/^- undecided \(machine busy/),
  ]);
  expect(lines(result([design('fenced', 0.2)]))[1]).toMatch(/^- not measured: W CPU per delivered event/);
});

/**
 * How scenario W turns arrivals into figures (bench/webhooks.ts) and holds them to the targets
 * (bench/report.ts): each delivery against the commit of its change, repeats and strays left out,
 * and a busy machine or too few rounds leaves a target undecided.
 */
import type { Measurement } from '../../bench/measure';
import { targets, type RunResult } from '../../bench/report';
import { performance } from 'node:perf_hooks';
import { deliveriesIn, dispatcherRatio, drained, matchDeliveries, percentile, type WebhookResult } from '../../bench/webhooks';
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

test('a window with the dispatcher running counts only when it delivered at least 90% of what was due in it', () => {
  const one = new Map([
    ['job-a', [900, 1500]],
    ['job-b', [1999, 2000]],
  ]);
  const two = new Map([['job-a', [1200, 1800]]]);
  // 1500, 1999, 1200 and 1800 are in [1000, 2000): 4 in a second.
  expect(deliveriesIn([one, two], 1000, 2000, 4)).toEqual({ perSecond: 4 });
  expect(deliveriesIn([one, two], 1000, 2000, 5)).toEqual({ perSecond: 4, invalid: 'the dispatcher fell behind: 4 deliveries/s of 5' });
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

const window = (reqPerSec: number, otherCores = 0.05, invalid?: string) => ({ reqPerSec, otherCores, ...(invalid ? { invalid } : {}) }) as Measurement;

function result(rounds: WebhookResult['rounds'], latency: Partial<WebhookResult['latency']> = {}, otherCores = 0.05): WebhookResult {
  return {
    size: 10_000,
    subscriptions: 10,
    rate: 50,
    seconds: 30,
    changes: 1500,
    failedChanges: 0,
    latency: { delivered: 15_000, expected: 15_000, repeats: 0, p50: 300, p99: 900, max: 1200, perSecond: 500, ...latency },
    otherCores,
    dispatcherCores: 0.4,
    serviceCores: 0.1,
    loadAverage: '0.5 0.5 0.5',
    rounds,
  };
}

test('the cost is the median over rounds where both windows are valid', () => {
  const cost = dispatcherRatio(
    result([
      { round: 1, on: window(900), off: window(1000) },
      { round: 2, on: window(500), off: window(1000, 0.05, 'load generator saturated') },
      { round: 3, on: window(980), off: window(1000) },
      { round: 4, on: window(800), off: window(1000) },
    ]),
  );
  expect(cost.rounds).toBe(3);
  expect(cost.ratio).toBeCloseTo(0.9, 6);
});

const runOf = (w: WebhookResult): RunResult => benchRun(10_000, { webhooks: [w] });

const lines = (w: WebhookResult) => targets(runOf(w)).filter((line) => line.includes('W '));
const three = (on: number, off: number, other = 0.05) => [1, 2, 3].map((round) => ({ round, on: window(on, other), off: window(off, other) }));

test('W targets: met on a quiet machine, NOT met when late, missing or costly', () => {
  expect(lines(result(three(970, 1000)))).toEqual([expect.stringMatching(/^- met: W commit to delivery/), expect.stringMatching(/^- met: W get by id/)]);
  expect(lines(result(three(900, 1000), { p99: 3500 }))).toEqual([expect.stringMatching(/^- NOT met: W commit/), expect.stringMatching(/^- NOT met: W get by id .*0\.900x/)]);
  expect(lines(result(three(970, 1000), { delivered: 14_999 }))[0]).toMatch(/^- NOT met: W commit .*14999 of 15000/);
});

test('W targets: undecided on a busy machine or with fewer than three rounds', () => {
  expect(lines(result(three(970, 1000, 0.6), {}, 0.6))).toEqual([expect.stringMatching(/^- undecided \(machine busy \(0\.60 other cores\)\): W commit/), expect.stringMatching(/^- undecided \(machine busy/)]);
  expect(lines(result(three(970, 1000).slice(0, 2)))[1]).toMatch(/^- undecided \(2 rounds with both valid, 3 needed\): W get by id/);
});

/**
 * How scenario W turns arrivals into figures (bench/webhooks.ts) and holds them to its target
 * (bench/report.ts): each delivery against the commit of its change, repeats and strays left out,
 * the worst subscription's own percentiles, and a busy machine leaves a target undecided.
 */
import { targets } from '../../bench/report';
import { arrivalsIn, deliveries, drained, percentile, type WebhookResult } from '../../bench/webhooks';
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
  expect(deliveries(committed, [one, two])).toMatchObject({
    delivered: 3,
    expected: 4,
    repeats: 1,
    p50: 300,
    p99: 400,
    max: 400,
  });
});

test('arrivals in a window count every arrival, repeats included; the worst subscription is judged on its own percentiles, a missing delivery as never', () => {
  const one = new Map([
    ['job-a', [900, 1500]],
    ['job-b', [1999, 2000]],
  ]);
  const two = new Map([['job-a', [1200, 1800]]]);
  // 1500, 1999, 1200 and 1800 are in [1000, 2000).
  expect(arrivalsIn([{ arrivals: one }, { arrivals: two }], 1000, 2000)).toBe(4);
  const committed = new Map([
    ['job-a', 800],
    ['job-b', 1900],
  ]);
  expect(deliveries(committed, [one])).toMatchObject({ worstP50: 99, worstP99: 100 });
  expect(deliveries(committed, [one, two])).toMatchObject({ worstP50: 400, worstP99: Infinity });
});

test('waiting for the deliveries says whether every receiver has every job, or gives up at its limit', async () => {
  const committed = new Map([
    ['job-a', 1],
    ['job-b', 2],
  ]);
  const receiver = { arrivals: new Map([['job-a', [5]]]) };
  expect(await drained([receiver], committed, 200)).toBe(false);
  setTimeout(() => receiver.arrivals.set('job-b', [6]), 50);
  expect(await drained([receiver], committed, 60_000)).toBe(true);
});

function result(latency: Partial<WebhookResult['latency']> = {}, otherCores = 0.05): WebhookResult {
  return {
    size: 10_000,
    subscriptions: 1000,
    rate: 1,
    seconds: 30,
    changes: 30,
    failedChanges: 0,
    latency: {
      delivered: 30_000,
      expected: 30_000,
      repeats: 0,
      p50: 300,
      p99: 900,
      max: 1200,
      worstP50: 400,
      worstP99: 1500,
      ...latency,
    },
    arrivals: 30_000,
    cpuMs: { dispatchers: 4000, database: 2000 },
    cpuPerEventMs: 0.2,
    otherCores,
  };
}

const lines = (w: WebhookResult) => targets(benchRun(10_000, { webhooks: [w] })).filter((line) => line.includes('W '));

test('W target: met on a quiet machine, NOT met when a subscription is late or a delivery missing', () => {
  expect(lines(result())).toEqual([expect.stringMatching(/^- met: W commit to delivery/)]);
  expect(lines(result({ worstP99: 5200 }))[0]).toMatch(/^- NOT met: W commit/);
  expect(lines(result({ worstP50: 1100 }))[0]).toMatch(/^- NOT met: W commit/);
  expect(lines(result({ delivered: 29_999 }))[0]).toMatch(/^- NOT met: W commit .*29999 of 30000/);
});

test('W target: undecided on a busy machine', () => {
  expect(lines(result({}, 0.6))).toEqual([
    expect.stringMatching(/^- undecided \(machine busy \(0\.60 other cores\)\): W commit/),
  ]);
});

/**
 * When to stop measuring a comparison, and what its figure is. Every round measures a subject and
 * its reference back to back, so each round gives one ratio, read two ways: throughput (subject
 * req/s over reference req/s) and CPU (reference CPU per request over subject CPU per request;
 * above 1 means the subject is cheaper, as a throughput ratio above 1 means it is faster). A
 * comparison is stable once its last WINDOW rounds agree within the spread asked for, both ways;
 * its figure is the median of those rounds.
 */

export const WINDOW = 3;
/** Throughput and CPU ratios further apart than this are flagged: something else set the pace. */
export const DISAGREEMENT = 0.1;

export interface RoundRatio {
  round: number;
  throughput: number;
  cpu: number;
}

export function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** (max - min) / median: 0.05 means the values lie within 5% of their median's size. */
export function spread(values: number[]): number {
  if (values.length === 0 || values.some((v) => !Number.isFinite(v))) return NaN;
  return (Math.max(...values) - Math.min(...values)) / median(values);
}

export interface Settled {
  /** The rounds the figure is taken from: the last WINDOW valid ones. */
  window: RoundRatio[];
  throughput: number;
  cpu: number;
  /** The larger of the two spreads over the window. */
  spread: number;
  stable: boolean;
  /** |throughput / cpu - 1| > DISAGREEMENT. */
  disagree: boolean;
}

export function settle(ratios: RoundRatio[], limit: number): Settled | undefined {
  if (ratios.length === 0) return undefined;
  const window = ratios.slice(-WINDOW);
  const throughput = median(window.map((r) => r.throughput));
  const cpu = median(window.map((r) => r.cpu));
  const worst = Math.max(spread(window.map((r) => r.throughput)), spread(window.map((r) => r.cpu)));
  return {
    window,
    throughput,
    cpu,
    spread: worst,
    stable: window.length === WINDOW && worst < limit,
    disagree: !(Math.abs(throughput / cpu - 1) <= DISAGREEMENT),
  };
}

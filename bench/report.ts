/**
 * The figures: each round gives one ratio per row, read two ways (throughput: subject req/s over
 * reference's; CPU: reference µs per request over subject's), stable once the last WINDOW rounds
 * agree within the spread asked for; the figure is their median. Writes the markdown.
 */
import { checkoutLine, type BeforeCheckout, type Options } from './options';
import type { ScenarioCheck } from './check';
import type { Measurement } from './measure';
import { BEFORE_SCENARIOS, type Comparison, type ScenarioKey, type Target } from './scenarios';
import { serviceNodeFlags } from './servers';
import type { SyncComparison, SyncRun } from './sync';
import type { WebhookResult } from './webhooks';

export const WINDOW = 3;
/** Throughput and CPU ratios further apart than this are flagged: something else set the pace. */
export const DISAGREEMENT = 0.1;
/** Other processes using more than this many cores during a measurement make its figures the machine's. */
export const BUSY_CORES = 0.25;

export interface ScenarioResult {
  size: number;
  key: ScenarioKey;
  title: string;
  path: string;
  unavailable?: string;
  check?: ScenarioCheck;
  comparison: Comparison;
  measurements: Measurement[];
  rounds: number;
}

export interface SyncResult {
  size: number;
  target: Target;
  gzip: boolean;
  /** The partner link's rate (bench/link.ts); loopback when absent. */
  link?: string;
  runs: SyncRun[];
}

export interface RunResult {
  startedAt: string;
  finishedAt: string;
  minutes: number;
  machine: Record<string, string | number>;
  options: Options;
  before?: BeforeCheckout;
  tables: Array<{ size: number; rows: number; seededSeconds: number; before?: { seededSeconds: number } }>;
  scenarios: ScenarioResult[];
  syncs: SyncResult[];
  webhooks?: WebhookResult[];
}

export function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** (max - min) / median: 0.05 means the values lie within 5% of their median's size. */
const spread = (values: number[]) => (Math.max(...values) - Math.min(...values)) / median(values);

/** gzip over plain: the median pass's bytes and the median pass's seconds (warm-up excluded). */
export function syncRatios({ plain, gzip }: Pick<SyncComparison, 'plain' | 'gzip'>) {
  const of = (runs: SyncRun[], key: 'bytes' | 'seconds') => median(runs.map((r) => r[key]));
  return { bytes: of(gzip, 'bytes') / of(plain, 'bytes'), time: of(gzip, 'seconds') / of(plain, 'seconds') };
}

/** Per round in which both the subject and the reference have a valid measurement: the two ratios. */
export function roundRatios(result: ScenarioResult, subject: Target) {
  const of = (round: number, target: Target) =>
    result.measurements.find((m) => m.round === round && m.target === target && !m.invalid);
  return [...new Set(result.measurements.map((m) => m.round))]
    .sort((a, b) => a - b)
    .flatMap((round) => {
      const [s, r] = [of(round, subject), of(round, result.comparison.reference)];
      return s && r
        ? [{ round, throughput: s.reqPerSec / r.reqPerSec, cpu: r.chainCpuPerRequest / s.chainCpuPerRequest }]
        : [];
    });
}

/** The figure: the medians of the last WINDOW valid rounds, stable once both ratios lie within the spread asked for. */
export function settled(result: ScenarioResult, subject: Target, spreadPercent: number) {
  const window = roundRatios(result, subject).slice(-WINDOW);
  const [throughput, cpu] = [median(window.map((r) => r.throughput)), median(window.map((r) => r.cpu))];
  const worst = Math.max(spread(window.map((r) => r.throughput)), spread(window.map((r) => r.cpu)));
  const stable = window.length === WINDOW && worst < spreadPercent / 100;
  const disagree = !(Math.abs(throughput / cpu - 1) <= DISAGREEMENT);
  return window.length ? { window, throughput, cpu, spread: worst, stable, disagree } : undefined;
}
type Settled = NonNullable<ReturnType<typeof settled>>;

/** A target's windows in a scenario, medians over the valid ones. */
export function summarise(result: ScenarioResult, target: Target) {
  const all = result.measurements.filter((m) => m.target === target);
  if (all.length === 0) return undefined;
  const runs = all.filter((m) => !m.invalid);
  const names = new Set(runs.flatMap((m) => Object.keys(m.cpuPerRequest)));
  const statuses: Record<string, number> = {};
  for (const m of runs) for (const [code, n] of Object.entries(m.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  return {
    valid: runs.length,
    invalid: all.flatMap((m) => (m.invalid ? [m.invalid] : [])),
    rates: runs.map((m) => m.reqPerSec),
    p50: median(runs.map((m) => m.p50)),
    p99: median(runs.map((m) => m.p99)),
    cpu: Object.fromEntries([...names].map((name) => [name, median(runs.map((m) => m.cpuPerRequest[name] ?? NaN))])),
    cores: Object.fromEntries([...names].map((name) => [name, median(runs.map((m) => m.cores[name] ?? NaN))])),
    chainCpu: median(runs.map((m) => m.chainCpuPerRequest)),
    otherCores: median(all.map((m) => m.otherCores)),
    statuses,
    errors: runs.reduce((sum, m) => sum + m.errors + m.timeouts, 0),
    together: all.every((m) => m.together === true),
  };
}
type Summary = NonNullable<ReturnType<typeof summarise>>;

const fixed = (value: number | undefined, digits = 0) =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
const percent = (value: number) => `${fixed(value * 100, 1)}%`;
const rate = (s: Summary) =>
  s.valid ? `${fixed(median(s.rates))} (${fixed(Math.min(...s.rates))}–${fixed(Math.max(...s.rates))})` : 'invalid';
const cpuCell = (s: Summary) =>
  Object.entries(s.cpu)
    .filter(([name]) => name !== 'generator' && name !== 'database')
    .map(([name, us]) => `${name} ${fixed(us)} (${fixed(s.cores[name], 2)} core)`)
    .join(' + ');
const LABELS: Record<Target, string> = {
  ...{ service: 'service', baseline: 'baseline', before: 'before', 'kong-bare': 'Kong, no plugin' },
  ...{ 'kong-key-auth': "Kong's key-auth + acl + request-transformer", 'kong-ours': 'Kong, ours (Redis)' },
  'kong-bundled': "Kong's key-auth + acl + rate-limiting (Redis) + prometheus",
};

function notes(result: ScenarioResult, sides: Summary[], row: Settled | undefined, spreadPercent: number): string {
  const out: string[] = [];
  if (result.check && !result.check.body.startsWith('identical')) out.push(`body ${result.check.body}`);
  if (row?.disagree)
    out.push(`**ratios disagree** (throughput ${fixed(row.throughput, 2)} vs CPU ${fixed(row.cpu, 2)})`);
  if (row && !row.stable) out.push(`not stable within ${result.rounds} rounds (${unstable(row, spreadPercent)})`);
  const invalid = sides.flatMap((s) => s.invalid);
  if (invalid.length) out.push(`${invalid.length} measurement(s) invalid: ${[...new Set(invalid)].join('; ')}`);
  const failures = (s: Summary) => Object.entries(s.statuses).filter(([code]) => !code.startsWith('2'));
  for (const s of sides.filter((side) => side.errors || failures(side).length))
    out.push([...failures(s).map(([code, n]) => `${n} × ${code}`), `${s.errors} errors`].join(', '));
  if (!sides[0]!.together) out.push('measured in turn, not at once');
  const other = Math.max(...sides.map((s) => s.otherCores));
  if (other > BUSY_CORES) out.push(`machine busy: other processes used ${other.toFixed(2)} cores meanwhile`);
  return out.join('; ');
}

const unstable = (row: Settled, spreadPercent: number) =>
  row.window.length < WINDOW
    ? `${row.window.length} valid round${row.window.length === 1 ? '' : 's'}, ${WINDOW} needed`
    : `spread ${percent(row.spread)}, asked < ${spreadPercent}%`;

const HEADER = [
  '| Row | Subject req/s (min–max) | p50 / p99 ms | Reference req/s (min–max) | p50 / p99 ms | Ratio: throughput / CPU | Spread (rounds) | CPU µs/req subject ; reference | DB µs/req | Notes |',
  '|---|---|---|---|---|---|---|---|---|---|',
];

export function markdownTable(run: RunResult): string {
  const lines: string[] = [];
  for (const { size, rows, seededSeconds, before } of run.tables) {
    const seeded = [seededSeconds && `seeded in ${seededSeconds.toFixed(0)} s`];
    if (before) seeded.push(`before's seeded in ${before.seededSeconds.toFixed(0)} s`);
    lines.push(
      '',
      `**${size.toLocaleString('en-US')} jobs** (${[`${rows.toLocaleString('en-US')} rows`, ...seeded.filter(Boolean)].join(', ')})`,
    );
    const results = run.scenarios.filter((r) => r.size === size);
    if (results.length) lines.push('', ...HEADER);
    for (const result of results) {
      const label = `${result.key} ${result.title}`;
      const { subjects, reference: target } = result.comparison;
      const reference = subjects.includes(target) ? undefined : summarise(result, target);
      if (result.unavailable)
        lines.push(`| ${label} vs ${result.comparison.reference} | n/a | | | | | | | | ${result.unavailable} |`);
      for (const subject of result.unavailable ? [] : result.comparison.subjects) {
        const s = summarise(result, subject);
        if (!s) continue;
        const row = settled(result, subject, run.options.spread);
        const cells = [
          `${label}: ${LABELS[subject]} vs ${LABELS[result.comparison.reference]}`,
          rate(s),
          `${fixed(s.p50, 2)} / ${fixed(s.p99, 2)}`,
          reference ? rate(reference) : '–',
          reference ? `${fixed(reference.p50, 2)} / ${fixed(reference.p99, 2)}` : '–',
          row ? `${fixed(row.throughput, 2)}x / ${fixed(row.cpu, 2)}x` : 'invalid',
          row ? `${percent(row.spread)} (${row.window.map((r) => r.round).join(',')} of ${result.rounds})` : '–',
          `${cpuCell(s)} ; ${reference ? cpuCell(reference) : '–'}`,
          `${fixed(s.cpu.database)} ; ${fixed(reference?.cpu.database)}`,
          notes(result, reference ? [s, reference] : [s], row, run.options.spread),
        ];
        lines.push(`| ${cells.join(' | ')} |`);
      }
    }
    const syncs = run.syncs.filter((r) => r.size === size);
    if (syncs.length) lines.push('', ...syncTable(syncs));
    for (const w of (run.webhooks ?? []).filter((r) => r.size === size))
      lines.push(
        '',
        '| W webhook delivery | Changes (failed) | Deliveries / expected (repeats) | Commit to delivery p50 / p99 / max ms | Worst subscription p50 / p99 ms | Arrivals in the window | CPU ms: dispatchers + MariaDB | CPU ms an event |',
        '|---|---|---|---|---|---|---|---|',
        `| ${w.rate}/s creates for ${w.seconds} s to ${w.subscriptions} loopback receivers, two dispatchers | ${w.changes} (${w.failedChanges}) | ${w.latency.delivered} / ${w.latency.expected} (${w.latency.repeats}) | ` +
          `${fixed(w.latency.p50)} / ${fixed(w.latency.p99)} / ${fixed(w.latency.max)} | ${fixed(w.latency.worstP50)} / ${fixed(w.latency.worstP99)} | ${w.arrivals} | ${fixed(w.cpuMs.dispatchers)} + ${fixed(w.cpuMs.database)} | ${fixed(w.cpuPerEventMs, 3)} |`,
      );
  }
  return lines.join('\n');
}

function syncTable(syncs: SyncResult[]): string[] {
  const lines = [
    '| Full sync (change feed, limit=500) | Jobs | Pages | MB on the wire | MB decoded | Seconds (each run) | Content-Encoding answered | Bytes vs plain | Time vs plain |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const sync of syncs) {
    const plain = syncs.find((s) => s.target === sync.target && s.link === sync.link && !s.gzip);
    const ratios = plain && syncRatios({ plain: plain.runs, gzip: sync.runs });
    const of = (key: 'bytes' | 'decodedBytes') => fixed(median(sync.runs.map((r) => r[key])) / 1e6, 1);
    lines.push(
      `| ${LABELS[sync.target]}, ${sync.link ? `across a ${sync.link} link` : 'loopback'}, ${sync.gzip ? 'Accept-Encoding: gzip' : 'no Accept-Encoding'} | ${sync.runs[0]?.jobs ?? '–'} | ${sync.runs[0]?.pages ?? '–'} | ` +
        `${of('bytes')} | ${of('decodedBytes')} | ${sync.runs.map((r) => r.seconds.toFixed(1)).join(', ')} | ${[...new Set(sync.runs.map((r) => r.contentEncoding))].join(', ')} | ` +
        `${ratios ? percent(ratios.bytes) : '–'} | ${ratios ? `${fixed(ratios.time, 2)}x` : '–'} |`,
    );
  }
  return lines;
}

/** Why a row's figure cannot decide a target: unstable, its two readings apart, or a busy machine. */
function undecided(result: ScenarioResult, row: Settled | undefined, spreadPercent: number): string | undefined {
  const sides = [...result.comparison.subjects, result.comparison.reference];
  const other = Math.max(...sides.map((t) => summarise(result, t)?.otherCores ?? 0));
  const reasons = [
    row && !row.stable && `not stable (${unstable(row, spreadPercent)})`,
    row?.disagree && 'throughput and CPU ratios disagree',
    other > BUSY_CORES && `machine busy (${other.toFixed(2)} other cores)`,
  ].filter(Boolean);
  return row && reasons.length ? reasons.join(', ') : undefined;
}

/** The targets, each with what this run measured: met or NOT met only from a valid, stable row whose readings agree on a quiet machine. */
export function targets(run: RunResult): string[] {
  const out: string[] = [];
  const say = (met: boolean | undefined, text: string, flagged?: string) =>
    out.push(
      `- ${met === undefined ? 'not measured' : flagged ? `undecided (${flagged})` : met ? 'met' : 'NOT met'}: ${text}`,
    );
  const busy = (cores: number) => (cores > BUSY_CORES ? `machine busy (${cores.toFixed(2)} other cores)` : undefined);
  const sizes = run.tables.map((t) => t.size);
  for (const size of sizes) {
    const find = (key: ScenarioKey, reference: Target) =>
      run.scenarios.find(
        (r) => r.size === size && r.key === key && r.comparison.reference === reference && !r.unavailable,
      );
    for (const [key, title, bar] of [
      ['D', 'get by id', 0.85],
      ['E', 'create', 0.8],
    ] as const) {
      const result = find(key, 'baseline');
      const row = result && settled(result, 'service', run.options.spread);
      const text = `${key} ${title} >= ${bar}x baseline at ${size}: ${fixed(row?.throughput, 2)}x (CPU ${fixed(row?.cpu, 2)}x)`;
      if (result) say(row && row.throughput >= bar, text, undecided(result, row, run.options.spread));
    }
    // Our Kong against Kong's own plugins: the Kong processes' own CPU per request (the service's left out).
    const k = find('K', 'service');
    const ours = k && summarise(k, 'kong-ours');
    for (const peer of ['kong-key-auth', 'kong-bundled'] as const) {
      const [cpuBar, rateBar] = peer === 'kong-key-auth' ? [1.25, 0.9] : [0.5, 0];
      const other = k && summarise(k, peer);
      if (!ours?.valid || !other?.valid) continue;
      const others = busy(Math.max(ours.otherCores, other.otherCores));
      const flagged = ours.valid < WINDOW ? `${ours.valid} valid rounds, ${WINDOW} needed` : others;
      const [cpu, rate] = [ours.cpu['kong-ours']! / other.cpu[peer]!, median(ours.rates) / median(other.rates)];
      const at = `${LABELS[peer]}'s at ${size}`;
      const cpuText = `K our Kong's CPU per request (worker + Redis) <= ${cpuBar}x ${at}: ${fixed(cpu, 2)}x`;
      say(cpu <= cpuBar, cpuText, flagged);
      if (rateBar) say(rate >= rateBar, `K our Kong's throughput >= ${rateBar}x ${at}: ${fixed(rate, 2)}x`, flagged);
    }
  }
  // gzip over plain, judged across the partner's link when it was measured (on loopback a byte costs nothing).
  const largest = Math.max(...sizes);
  const ratiosAt = (link: string | undefined) => {
    const [plain, gzip] = [false, true].map((z) =>
      run.syncs.find((s) => s.gzip === z && s.link === link && s.size === largest),
    );
    return plain && gzip ? syncRatios({ plain: plain.runs, gzip: gzip.runs }) : undefined;
  };
  const rate = run.syncs.find((s) => s.link !== undefined)?.link;
  const [loopback, across] = [ratiosAt(undefined), rate ? ratiosAt(rate) : undefined];
  const judged = across ?? loopback;
  const onLoopback = loopback && `on loopback ${percent(loopback.bytes)}, ${loopback.time.toFixed(2)}x the time`;
  const where = across
    ? ` across a ${rate} link, at ${largest}: ${percent(across.bytes)}, ${across.time.toFixed(2)}x the time (${onLoopback})`
    : `, at ${largest}: ${onLoopback} (no link measured)`;
  const sync = 'S full sync through real Kong (our configuration) with gzip moves <= 15% of the bytes in no more time';
  if (judged) say(judged.bytes <= 0.15 && judged.time <= 1, `${sync}${where}`);
  for (const w of run.webhooks ?? []) {
    const { delivered, expected, worstP50, worstP99 } = w.latency;
    say(
      expected > 0 ? delivered === expected && worstP50 <= 1000 && worstP99 <= 5000 : undefined,
      `W commit to delivery p50 <= 1 s and p99 <= 5 s on every subscription, every delivery made, at ${w.rate} change/s to ${w.subscriptions} subscriptions, ${w.size}: ` +
        `worst p50 ${fixed(worstP50)} ms, worst p99 ${fixed(worstP99)} ms, ${delivered} of ${expected}`,
      busy(w.otherCores),
    );
  }
  return out;
}

export function markdownReport(run: RunResult): string {
  const o = run.options;
  return [
    `Run ${run.startedAt} (${run.minutes.toFixed(1)} min), \`npm run bench -- ${o.argv}\`.`,
    `Machine: ${Object.entries(run.machine)
      .map(([name, value]) => `${name}: ${value}`)
      .join('; ')}.`,
    ...(run.before
      ? [
          `Before (--before): ${checkoutLine(run.before)}; its service from its own dist with its own Dockerfile's flags, on jobs_bench_<size>_before (migrated by its own migrate command, seeded with the same jobs); ` +
            `the "service vs before" rows of ${BEFORE_SCENARIOS.join(', ')} are measured as the pairs are.`,
        ]
      : []),
    `Rounds of ${o.duration} s after a ${String(o.warmup)} s warm-up, ${String(o.connections)} connections a target, one wrk a target; ` +
      'where each side is one process (not K), subject and reference measured at once, both on one core, wrk on the others; K in turn; ' +
      `each scenario runs at least ${o.rounds} and at most ${o.maxRounds} rounds, until the last ${WINDOW} agree within ${o.spread}% both ways. ` +
      "Ratio = subject / reference, the median of those rounds: throughput (req/s) and CPU (reference's CPU µs per request / subject's, whole chain). " +
      `Service with LOG_LEVEL=info to /dev/null, DB_POOL_SIZE=${String(o.pool)}, \`node ${serviceNodeFlags().join(' ')}\` (the Dockerfile's CMD) for the service and the baseline, with --single-threaded-gc (they share a core). ` +
      'How to read a row: docs/performance.md.',
    markdownTable(run),
    '',
    'Targets (valid rows only):',
    '',
    ...targets(run),
  ].join('\n');
}

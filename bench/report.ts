/**
 * Turns the measurements into figures. Every round measures a subject and its reference together,
 * so each round gives one ratio, read two ways: throughput (subject req/s over reference req/s) and
 * CPU (reference CPU per request over subject's; above 1 the subject is cheaper). A row is stable
 * once its last WINDOW rounds agree within the spread asked for, both ways; its figure is their
 * median. Writes the markdown for bench/results/ and docs/performance.md's latest section.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { checkoutLine, type BeforeCheckout } from './before';
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
  /** Rounds run (warm-up not counted). */
  rounds: number;
}

export interface SyncResult {
  size: number;
  target: Target;
  gzip: boolean;
  /** The link's rate (bench/link.ts) when the client synced across one; loopback when absent. */
  link?: string;
  runs: SyncRun[];
}

export interface RunResult {
  startedAt: string;
  finishedAt: string;
  minutes: number;
  machine: Record<string, string | number>;
  options: Record<string, unknown> & { spread: number; rounds: number; maxRounds: number; duration: number };
  /** --before: the checkout whose service the data-layer scenarios also compare with. */
  before?: BeforeCheckout;
  tables: Array<{ size: number; rows: number; seededSeconds: number; before?: { seededSeconds: number } }>;
  scenarios: ScenarioResult[];
  syncs: SyncResult[];
  webhooks?: WebhookResult[];
}

export function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** (max - min) / median: 0.05 means the values lie within 5% of their median's size. */
const spread = (values: number[]) => (Math.max(...values) - Math.min(...values)) / median(values);

/** gzip over plain: the median pass's bytes and the median pass's seconds (warm-up excluded). */
export function syncRatios(comparison: Pick<SyncComparison, 'plain' | 'gzip'>): { bytes: number; time: number } {
  const of = (runs: SyncRun[], key: 'bytes' | 'seconds') => median(runs.map((r) => r[key]));
  return {
    bytes: of(comparison.gzip, 'bytes') / of(comparison.plain, 'bytes'),
    time: of(comparison.gzip, 'seconds') / of(comparison.plain, 'seconds'),
  };
}

export interface RoundRatio {
  round: number;
  throughput: number;
  cpu: number;
}

export interface Settled {
  /** The rounds the figure is taken from: the last WINDOW valid ones. */
  window: RoundRatio[];
  throughput: number;
  cpu: number;
  /** The larger of the two spreads over the window. */
  spread: number;
  stable: boolean;
  disagree: boolean;
}

/** Per round in which both the subject and the reference have a valid measurement: the two ratios. */
export function roundRatios(result: ScenarioResult, subject: Target): RoundRatio[] {
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

export function settled(result: ScenarioResult, subject: Target, spreadPercent: number): Settled | undefined {
  const window = roundRatios(result, subject).slice(-WINDOW);
  if (window.length === 0) return undefined;
  const throughput = median(window.map((r) => r.throughput));
  const cpu = median(window.map((r) => r.cpu));
  const worst = Math.max(spread(window.map((r) => r.throughput)), spread(window.map((r) => r.cpu)));
  return {
    window,
    throughput,
    cpu,
    spread: worst,
    stable: window.length === WINDOW && worst < spreadPercent / 100,
    disagree: !(Math.abs(throughput / cpu - 1) <= DISAGREEMENT),
  };
}

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
    generatorBusy: Math.max(...all.map((m) => m.generatorBusy)),
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
  service: 'service',
  baseline: 'baseline',
  before: 'before',
  'kong-bare': 'Kong, no plugin',
  'kong-key-auth': "Kong's key-auth + acl",
  'kong-ours': 'Kong, our configuration (Redis)',
};

function notes(result: ScenarioResult, sides: Summary[], row: Settled | undefined, spreadPercent: number): string {
  const out: string[] = [];
  if (result.check && !result.check.body.startsWith('identical')) out.push(`body ${result.check.body}`);
  if (row?.disagree)
    out.push(`**ratios disagree** (throughput ${fixed(row.throughput, 2)} vs CPU ${fixed(row.cpu, 2)})`);
  if (row && !row.stable) out.push(`not stable within ${result.rounds} rounds (${unstable(row, spreadPercent)})`);
  const invalid = sides.flatMap((s) => s.invalid);
  if (invalid.length) out.push(`${invalid.length} measurement(s) invalid: ${[...new Set(invalid)].join('; ')}`);
  for (const s of sides) {
    const codes = Object.entries(s.statuses).filter(([code]) => !code.startsWith('2'));
    if (codes.length || s.errors)
      out.push(
        `${[...codes.map(([code, n]) => `${n} × ${code}`), ...(s.errors ? [`${s.errors} errors`] : [])].join(', ')}`,
      );
  }
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
  '| Row | Subject req/s (min–max) | p50 / p99 ms | Reference req/s (min–max) | p50 / p99 ms | Ratio: throughput / CPU | Spread (rounds) | CPU µs/req subject ; reference | Generator busiest | DB µs/req | Notes |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
];

export function markdownTable(run: RunResult): string {
  const lines: string[] = [];
  for (const { size, rows, seededSeconds, before } of run.tables) {
    const seeded = [
      seededSeconds && `seeded in ${seededSeconds.toFixed(0)} s`,
      before && `before's seeded in ${before.seededSeconds.toFixed(0)} s`,
    ];
    lines.push(
      '',
      `**${size.toLocaleString('en-US')} jobs** (${[`${rows.toLocaleString('en-US')} rows`, ...seeded.filter(Boolean)].join(', ')})`,
    );
    const results = run.scenarios.filter((r) => r.size === size);
    if (results.length) lines.push('', ...HEADER);
    for (const result of results) {
      const label = `${result.key} ${result.title}`;
      const reference = summarise(result, result.comparison.reference);
      if (result.unavailable)
        lines.push(`| ${label} vs ${result.comparison.reference} | n/a | | | | | | | | | ${result.unavailable} |`);
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
          `${fixed(Math.max(s.generatorBusy, reference?.generatorBusy ?? 0) * 100)}%`,
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
  if (!row) return undefined;
  const reasons: string[] = [];
  if (!row.stable) reasons.push(`not stable (${unstable(row, spreadPercent)})`);
  if (row.disagree) reasons.push('throughput and CPU ratios disagree');
  const targets = [...result.comparison.subjects, result.comparison.reference];
  const busy = Math.max(...targets.map((t) => summarise(result, t)?.otherCores ?? 0));
  if (busy > BUSY_CORES) reasons.push(`machine busy (${busy.toFixed(2)} other cores)`);
  return reasons.length ? reasons.join(', ') : undefined;
}

/** Our Kong against Kong's key-auth + acl, round by round: the Kong processes' own CPU per request and the throughput, medians. */
export function kongAgainstKeyAuth(k: ScenarioResult): { cpu: number; throughput: number; rounds: number } {
  const cpu: number[] = [];
  const throughput: number[] = [];
  for (const round of new Set(k.measurements.map((m) => m.round))) {
    const of = (target: Target) => k.measurements.find((m) => m.round === round && m.target === target && !m.invalid);
    const [ours, keyAuth] = [of('kong-ours'), of('kong-key-auth')];
    if (!ours || !keyAuth) continue;
    cpu.push(ours.cpuPerRequest['kong-ours']! / keyAuth.cpuPerRequest['kong-key-auth']!);
    throughput.push(ours.reqPerSec / keyAuth.reqPerSec);
  }
  return { cpu: median(cpu), throughput: median(throughput), rounds: cpu.length };
}

/** The targets, each with what this run measured: met or NOT met only from a valid, stable row whose readings agree on a quiet machine. */
export function targets(run: RunResult): string[] {
  const out: string[] = [];
  const say = (met: boolean | undefined, text: string, flagged?: string) =>
    out.push(
      `- ${met === undefined ? 'not measured' : flagged ? `undecided (${flagged})` : met ? 'met' : 'NOT met'}: ${text}`,
    );
  const sizes = run.tables.map((t) => t.size);
  for (const size of sizes) {
    for (const [key, title, bar] of [
      ['D', 'get by id', 0.85],
      ['E', 'create', 0.8],
    ] as const) {
      const result = run.scenarios.find(
        (r) => r.size === size && r.key === key && r.comparison.reference === 'baseline',
      );
      if (!result || result.unavailable) continue;
      const row = settled(result, 'service', run.options.spread);
      const text = `${key} ${title} >= ${bar}x baseline at ${size}: ${fixed(row?.throughput, 2)}x (CPU ${fixed(row?.cpu, 2)}x)`;
      say(row && row.throughput >= bar, text, undecided(result, row, run.options.spread));
    }
    const k = run.scenarios.find((r) => r.size === size && r.key === 'K');
    if (!k || k.unavailable) continue;
    const vs = kongAgainstKeyAuth(k);
    const busy = Math.max(...(['kong-ours', 'kong-key-auth'] as const).map((t) => summarise(k, t)?.otherCores ?? 0));
    const flagged =
      vs.rounds < WINDOW
        ? `${vs.rounds} rounds with both valid, ${WINDOW} needed`
        : busy > BUSY_CORES
          ? `machine busy (${busy.toFixed(2)} other cores)`
          : undefined;
    const at = `Kong's key-auth + acl's at ${size}`;
    say(
      vs.rounds ? vs.cpu <= 2 : undefined,
      `K our Kong's CPU per request (worker, log filters, Redis) <= 2x ${at}: ${fixed(vs.cpu, 2)}x`,
      flagged,
    );
    say(
      vs.rounds ? vs.throughput >= 0.8 : undefined,
      `K our Kong's throughput >= 0.8x ${at}: ${fixed(vs.throughput, 2)}x`,
      flagged,
    );
  }
  const largest = Math.max(...sizes);
  // gzip over plain measured in one place (loopback: no link), when both were.
  const ratiosAt = (link: string | undefined) => {
    const [plain, gzip] = [false, true].map((z) =>
      run.syncs.find((s) => s.gzip === z && s.link === link && s.size === largest),
    );
    return plain && gzip ? syncRatios({ plain: plain.runs, gzip: gzip.runs }) : undefined;
  };
  const loopback = ratiosAt(undefined);
  const rate = run.syncs.find((s) => s.link !== undefined)?.link;
  const across = rate ? ratiosAt(rate) : undefined;
  const sync = `S full sync through real Kong (our configuration) with gzip moves <= 15% of the bytes in no more time`;
  if (loopback) {
    const onLoopback = `on loopback ${percent(loopback.bytes)}, ${loopback.time.toFixed(2)}x the time`;
    if (across)
      say(
        across.bytes <= 0.15 && across.time <= 1,
        `${sync} across a ${rate} link, at ${largest}: ${percent(across.bytes)}, ${across.time.toFixed(2)}x the time (${onLoopback})`,
      );
    else say(loopback.bytes <= 0.15 && loopback.time <= 1, `${sync}, at ${largest}: ${onLoopback} (no link measured)`);
  }
  for (const w of run.webhooks ?? []) {
    const complete = w.latency.delivered === w.latency.expected && w.latency.expected > 0;
    say(
      w.latency.expected > 0 ? complete && w.latency.worstP50 <= 1000 && w.latency.worstP99 <= 5000 : undefined,
      `W commit to delivery p50 <= 1 s and p99 <= 5 s on every subscription, every delivery made, at ${w.rate} change/s to ${w.subscriptions} subscriptions, ${w.size}: ` +
        `worst p50 ${fixed(w.latency.worstP50)} ms, worst p99 ${fixed(w.latency.worstP99)} ms, ${w.latency.delivered} of ${w.latency.expected}`,
      w.otherCores > BUSY_CORES ? `machine busy (${w.otherCores.toFixed(2)} other cores)` : undefined,
    );
  }
  return out;
}

export function markdownReport(run: RunResult): string {
  const o = run.options;
  return [
    `Run ${run.startedAt} (${run.minutes.toFixed(1)} min), \`npm run bench -- ${String(o.argv as string)}\`.`,
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

const [DOCS_START, DOCS_END] = ['<!-- bench:latest -->', '<!-- /bench:latest -->'];

/** Replaces the latest-run section of a docs page (between the bench:latest markers), adding the markers at the end when missing. */
export function writeLatest(docsPath: string, markdown: string): void {
  const page = readFileSync(docsPath, 'utf8');
  const [start, end] = [page.indexOf(DOCS_START), page.indexOf(DOCS_END)];
  const section = `${DOCS_START}\n${markdown}\n${DOCS_END}`;
  writeFileSync(
    docsPath,
    start >= 0 && end > start
      ? `${page.slice(0, start)}${section}${page.slice(end + DOCS_END.length)}`
      : `${page.trimEnd()}\n\n${section}\n`,
  );
}

/**
 * Turns the measurements into figures: per row, the subject against its reference measured in the
 * same rounds, the ratio read two ways (throughput and CPU per request) with its spread, the
 * generator's cost, and why a row does not count when it does not. Writes the markdown table for
 * bench/results/ and docs/performance.md's latest section, never anything else.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { checkoutLine, type BeforeCheckout } from './before';
import type { ScenarioCheck } from './check';
import type { Measurement } from './measure';
import { BEFORE_SCENARIOS, type Comparison, type ScenarioKey, type Target } from './scenarios';
import { serviceNodeFlags } from './servers';
import { DISAGREEMENT, median, settle, WINDOW, type RoundRatio, type Settled } from './stability';
import { syncRatios, type SyncRun } from './sync';
import type { WebhookResult } from './webhooks';

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
  options: Record<string, unknown> & {
    spread: number;
    rounds: number;
    maxRounds: number;
    duration: number;
    connections: number;
    warmup: number;
    pool: number;
  };
  /** --before: the checkout whose service the data-layer scenarios also compare with (absent without it). */
  before?: BeforeCheckout;
  /** before: its database's copy of the table (--before only). */
  tables: Array<{
    size: number;
    rows: number;
    seededSeconds: number;
    before?: { rows: number; seededSeconds: number };
  }>;
  scenarios: ScenarioResult[];
  syncs: SyncResult[];
  /** W, webhook delivery (absent in runs from before it existed). */
  webhooks?: WebhookResult[];
}

/** Why a row is not stable: too few valid rounds, or their spread. */
function unstable(row: Settled, spreadPercent: number): string {
  return row.window.length < WINDOW
    ? `${row.window.length} valid round${row.window.length === 1 ? '' : 's'}, ${WINDOW} needed`
    : `spread ${percent(row.spread)}, asked < ${spreadPercent}%`;
}

/** What a request counts as for a comparison: every answer, or only a 2xx. */
export const rateOf = (m: Measurement, counts: Comparison['counts']) =>
  counts === 'good' ? m.goodPerSec : m.reqPerSec;

/** Per round in which both the subject and the reference have a valid measurement: the two ratios. */
export function roundRatios(result: ScenarioResult, subject: Target): RoundRatio[] {
  const { reference, counts } = result.comparison;
  const out: RoundRatio[] = [];
  const rounds = [...new Set(result.measurements.map((m) => m.round))].sort((a, b) => a - b);
  for (const round of rounds) {
    const of = (target: Target) =>
      result.measurements.find((m) => m.round === round && m.target === target && !m.invalid);
    const s = of(subject);
    const r = of(reference);
    if (!s || !r) continue;
    out.push({
      round,
      throughput: rateOf(s, counts) / rateOf(r, counts),
      cpu: r.chainCpuPerRequest / s.chainCpuPerRequest,
    });
  }
  return out;
}

export function settled(result: ScenarioResult, subject: Target, spreadPercent: number): Settled | undefined {
  return settle(roundRatios(result, subject), spreadPercent / 100);
}

interface Summary {
  valid: number;
  invalid: string[];
  rate: number;
  min: number;
  max: number;
  p50: number;
  p99: number;
  cpu: Record<string, number>;
  cores: Record<string, number>;
  chainCpu: number;
  generatorBusy: number;
  otherCores: number;
  peakRss: Record<string, number>;
  statuses: Record<string, number>;
  errors: number;
  mode: Measurement['mode'];
  together: boolean;
}

export function summarise(result: ScenarioResult, target: Target): Summary | undefined {
  const all = result.measurements.filter((m) => m.target === target);
  if (all.length === 0) return undefined;
  const runs = all.filter((m) => !m.invalid);
  const rates = runs.map((m) => rateOf(m, result.comparison.counts));
  const cpu: Record<string, number> = {};
  const peakRss: Record<string, number> = {};
  for (const name of new Set(runs.flatMap((m) => Object.keys(m.cpuPerRequest))))
    cpu[name] = median(runs.map((m) => m.cpuPerRequest[name] ?? NaN));
  const cores: Record<string, number> = {};
  for (const name of new Set(runs.flatMap((m) => Object.keys(m.cores ?? {}))))
    cores[name] = median(runs.map((m) => m.cores?.[name] ?? NaN));
  for (const name of new Set(all.flatMap((m) => Object.keys(m.peakRssBytes))))
    peakRss[name] = Math.max(...all.map((m) => m.peakRssBytes[name] ?? 0));
  const statuses: Record<string, number> = {};
  for (const m of runs) for (const [code, n] of Object.entries(m.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  return {
    valid: runs.length,
    invalid: all.filter((m) => m.invalid).map((m) => m.invalid!),
    rate: median(rates),
    min: rates.length ? Math.min(...rates) : NaN,
    max: rates.length ? Math.max(...rates) : NaN,
    p50: median(runs.map((m) => m.p50)),
    p99: median(runs.map((m) => m.p99)),
    cpu,
    cores,
    chainCpu: median(runs.map((m) => m.chainCpuPerRequest)),
    generatorBusy: Math.max(...all.map((m) => m.generatorBusy)),
    otherCores: median(all.map((m) => m.otherCores)),
    peakRss,
    statuses,
    errors: runs.reduce((sum, m) => sum + m.errors + m.timeouts, 0),
    mode: all[0]!.mode,
    together: all.every((m) => m.together === true),
  };
}

const MiB = (bytes: number | undefined) =>
  bytes === undefined || !Number.isFinite(bytes) ? '–' : (bytes / 1024 / 1024).toFixed(0);
const fixed = (value: number | undefined, digits = 0) =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
const rate = (s: Summary) =>
  s.valid
    ? `${fixed(s.rate, s.rate < 10 ? 2 : 0)} (${fixed(s.min, s.min < 10 ? 2 : 0)}–${fixed(s.max, s.max < 10 ? 2 : 0)})`
    : 'invalid';
const latency = (s: Summary) => `${fixed(s.p50, 2)} / ${fixed(s.p99, 2)}`;
const percent = (value: number) => `${fixed(value * 100, 1)}%`;

const LABELS: Record<Target, string> = {
  service: 'service',
  baseline: 'baseline',
  gateway: 'local gateway',
  proxy: 'bare proxy',
  'service-unbounded': 'service, unbounded queue',
  'service-flags': "service, the Dockerfile's node flags",
  'service-node-defaults': "service, node's defaults",
  'kong-bare': 'Kong, no plugin',
  'kong-key-auth': "Kong's key-auth + acl",
  'kong-ours': 'Kong, our configuration (Redis)',
  before: 'before',
};

function nonSuccess(s: Summary): string {
  const codes = Object.entries(s.statuses).filter(([code]) => !code.startsWith('2'));
  return codes.length || s.errors
    ? `${codes.map(([code, n]) => `${n} × ${code}`).join(', ')}${s.errors ? `${codes.length ? ', ' : ''}${s.errors} socket errors/timeouts` : ''}`
    : '';
}

function notes(
  result: ScenarioResult,
  subject: Summary,
  reference: Summary | undefined,
  row: Settled | undefined,
  spreadPercent: number,
): string {
  const out: string[] = [];
  if (result.check && !result.check.body.startsWith('identical')) out.push(`body ${result.check.body}`);
  if (result.check?.sql.startsWith('DIFFERS')) out.push("baseline SQL differs from the service's");
  if (row?.disagree)
    out.push(
      `**ratios disagree** (throughput ${fixed(row.throughput, 2)} vs CPU ${fixed(row.cpu, 2)}, more than ${DISAGREEMENT * 100}%)`,
    );
  if (row && !row.stable)
    out.push(
      `not stable within ${result.rounds} round${result.rounds === 1 ? '' : 's'} (${unstable(row, spreadPercent)})`,
    );
  const invalid = [...subject.invalid, ...(reference?.invalid ?? [])];
  if (invalid.length) out.push(`${invalid.length} measurement(s) invalid: ${[...new Set(invalid)].join('; ')}`);
  for (const [name, s] of [
    ['subject', subject],
    ['reference', reference],
  ] as const) {
    const bad = s ? nonSuccess(s) : '';
    if (bad) out.push(`${name}: ${bad}`);
  }
  if (subject.mode === 'one at a time') out.push('slow: timed one request at a time');
  else if (!subject.together) out.push('measured in turn, not at once');
  const other = Math.max(subject.otherCores, reference?.otherCores ?? 0);
  if (other > BUSY_CORES) out.push(`machine busy: other processes used ${other.toFixed(2)} cores meanwhile`);
  return out.join('; ');
}

function cpuCell(s: Summary): string {
  const parts = Object.entries(s.cpu).filter(([name]) => name !== 'generator' && name !== 'database');
  return parts
    .map(
      ([name, us]) =>
        `${name} ${fixed(us)}${Number.isFinite(s.cores[name]) ? ` (${fixed(s.cores[name], 2)} core)` : ''}`,
    )
    .join(' + ');
}

/** Other processes using more than this many cores during a measurement make its figures the machine's, not the servers'. */
export const BUSY_CORES = 0.25;

/** The subject's processes, and the reference's when it is a process of its own (N: what the flags are priced against). */
const peakCell = (s: Summary, reference: Summary | undefined) => {
  const named = (peaks: Record<string, number>) => Object.entries(peaks).map(([name, b]) => `${name} ${MiB(b)}`);
  const own = reference ? Object.keys(reference.peakRss).filter((name) => !(name in s.peakRss)) : [];
  return [...named(s.peakRss), ...named(Object.fromEntries(own.map((name) => [name, reference!.peakRss[name]!])))].join(
    ', ',
  );
};

const HEADER = [
  '| Row | Subject req/s (min–max) | p50 / p99 ms | Reference req/s (min–max) | p50 / p99 ms | Ratio: throughput / CPU | Spread (rounds) | CPU µs/req subject ; reference | Generator µs/req (busiest) | DB µs/req | Peak RSS MiB | Notes |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
];

export function markdownTable(run: RunResult): string {
  const lines: string[] = [];
  for (const { size, rows, seededSeconds, before } of run.tables) {
    const copy = before
      ? `; before's database ${before.rows.toLocaleString('en-US')} rows, migrated and copied in ${before.seededSeconds.toFixed(0)} s`
      : '';
    lines.push(
      '',
      `**${size.toLocaleString('en-US')} jobs** (${rows.toLocaleString('en-US')} rows${seededSeconds ? `, seeded in ${seededSeconds.toFixed(0)} s` : ''}${copy})`,
    );
    // A run of W alone has no wrk rows: no empty table.
    if (run.scenarios.some((r) => r.size === size)) lines.push('', ...HEADER);
    for (const result of run.scenarios.filter((r) => r.size === size)) {
      const label = `${result.key} ${result.title}`;
      if (result.unavailable) {
        lines.push(
          `| ${label}${result.comparison.reference === 'before' ? ': service vs before' : ''} | n/a | | | | | | | | | | ${result.unavailable} |`,
        );
        continue;
      }
      const reference = summarise(result, result.comparison.reference);
      for (const subject of result.comparison.subjects) {
        const s = summarise(result, subject);
        if (!s) continue;
        const row = settled(result, subject, run.options.spread);
        const rowLabel = `${label}: ${LABELS[subject]} vs ${LABELS[result.comparison.reference]}`;
        const ratio = row ? `${fixed(row.throughput, 2)}x / ${fixed(row.cpu, 2)}x` : 'invalid';
        const spread = row
          ? `${percent(row.spread)} (${row.window.map((r) => r.round).join(',')} of ${result.rounds})`
          : '–';
        const generator = `${fixed(s.cpu.generator, 1)} ; ${fixed(reference?.cpu.generator, 1)} (${fixed(Math.max(s.generatorBusy, reference?.generatorBusy ?? 0) * 100)}%)`;
        lines.push(
          `| ${rowLabel} | ${rate(s)} | ${latency(s)} | ${reference ? rate(reference) : '–'} | ${reference ? latency(reference) : '–'} | ${ratio} | ${spread} | ${cpuCell(s)} ; ${reference ? cpuCell(reference) : '–'} | ${generator} | ${fixed(s.cpu.database)} ; ${fixed(reference?.cpu.database)} | ${peakCell(s, reference)} | ${notes(result, s, reference, row, run.options.spread)} |`,
        );
      }
    }
    const syncs = run.syncs.filter((r) => r.size === size);
    if (syncs.length) lines.push('', ...syncTable(syncs));
    const hooks = (run.webhooks ?? []).filter((r) => r.size === size);
    if (hooks.length) lines.push('', ...webhookTable(hooks));
  }
  return lines.join('\n');
}

function webhookTable(results: WebhookResult[]): string[] {
  const lines = [
    '| W webhook delivery | Design | Changes (failed) | Deliveries / expected (repeats) | Commit to delivery p50 / p99 / max ms | Worst subscription p50 / p99 ms | Arrivals in the window | CPU ms: dispatchers + MariaDB | CPU ms an event |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const w of results) {
    for (const d of w.designs) {
      lines.push(
        `| ${w.rate}/s creates for ${w.seconds} s to ${w.subscriptions} loopback receivers, two dispatchers | ${d.design === 'today' ? 'today (5748254)' : 'fenced, fair'} | ${d.changes} (${d.failedChanges}) | ${d.latency.delivered} / ${d.latency.expected} (${d.latency.repeats}) | ` +
          `${fixed(d.latency.p50)} / ${fixed(d.latency.p99)} / ${fixed(d.latency.max)} | ${fixed(d.worstP50)} / ${fixed(d.worstP99)} | ${d.arrivals} | ${fixed(d.cpuMs.dispatchers)} + ${fixed(d.cpuMs.database)} | ${fixed(d.cpuPerEventMs, 3)} |`,
      );
    }
  }
  return lines;
}

function syncTable(syncs: SyncResult[]): string[] {
  const lines = [
    '| Full sync (change feed, limit=500) | Jobs | Pages | MB on the wire | MB decoded | Seconds (each run) | Content-Encoding answered | Bytes vs plain | Time vs plain |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const sync of syncs) {
    const plain = syncs.find((s) => s.target === sync.target && s.link === sync.link && !s.gzip);
    const bytes = median(sync.runs.map((r) => r.bytes));
    const seconds = median(sync.runs.map((r) => r.seconds));
    const plainBytes = plain && median(plain.runs.map((r) => r.bytes));
    const plainSeconds = plain && median(plain.runs.map((r) => r.seconds));
    const first = sync.runs[0];
    lines.push(
      `| ${LABELS[sync.target]}, ${sync.link ? `across a ${sync.link} link` : 'loopback'}, ${sync.gzip ? 'Accept-Encoding: gzip' : 'no Accept-Encoding'} | ${first?.jobs ?? '–'} | ${first?.pages ?? '–'} | ${fixed(bytes / 1e6, 1)} | ${fixed(median(sync.runs.map((r) => r.decodedBytes)) / 1e6, 1)} | ${sync.runs.map((r) => r.seconds.toFixed(1)).join(', ')} | ${[...new Set(sync.runs.map((r) => r.contentEncoding))].join(', ')} | ${plainBytes ? percent(bytes / plainBytes) : '–'} | ${plainSeconds ? `${fixed(seconds / plainSeconds, 2)}x` : '–'} |`,
    );
  }
  return lines;
}

/** A scenario's result; with --before, the row against its own reference, not the before twin. */
function find(results: ScenarioResult[], size: number, key: ScenarioKey, reference?: Target) {
  return results.find(
    (r) =>
      r.size === size &&
      r.key === key &&
      (reference ? r.comparison.reference === reference : r.comparison.reference !== 'before'),
  );
}

/** Why a row's figure cannot decide a target: unstable, its two readings apart, or a busy machine. */
function undecided(
  result: ScenarioResult,
  subject: Target,
  row: Settled | undefined,
  spreadPercent: number,
): string | undefined {
  if (!row) return undefined;
  const reasons: string[] = [];
  if (!row.stable) reasons.push(`not stable (${unstable(row, spreadPercent)})`);
  if (row.disagree) reasons.push('throughput and CPU ratios disagree');
  const busy = Math.max(
    summarise(result, subject)?.otherCores ?? 0,
    summarise(result, result.comparison.reference)?.otherCores ?? 0,
  );
  if (busy > BUSY_CORES) reasons.push(`machine busy (${busy.toFixed(2)} other cores)`);
  return reasons.length ? reasons.join(', ') : undefined;
}

/**
 * Our Kong against Kong's key-auth + acl, round by round (both measured in the same round): the
 * Kong processes' own CPU per request (the service's left out) and the throughput, medians.
 */
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

/**
 * The targets the numbers are held to, each with what this run measured: met or NOT met only
 * from a valid, stable row whose two readings agree on a quiet machine, otherwise undecided.
 */
export function targets(run: RunResult): string[] {
  const sizes = run.tables.map((t) => t.size);
  const out: string[] = [];
  const flags = new Map<string, string>();
  const say = (met: boolean | undefined, text: string, flagged?: string) =>
    out.push(
      `- ${met === undefined ? 'not measured' : flagged ? `undecided (${flagged})` : met ? 'met' : 'NOT met'}: ${text}`,
    );
  const flagOf = (size: number, key: ScenarioKey, subject: Target) => flags.get(`${size} ${key} ${subject}`);
  const ratioOf = (size: number, key: ScenarioKey, subject: Target) => {
    const result = find(run.scenarios, size, key);
    const row = result && settled(result, subject, run.options.spread);
    const flagged = result && undecided(result, subject, row, run.options.spread);
    if (flagged) flags.set(`${size} ${key} ${subject}`, flagged);
    return row;
  };
  const ran = (size: number, key: ScenarioKey) => find(run.scenarios, size, key) !== undefined;
  for (const size of sizes) {
    const d = ratioOf(size, 'D', 'service');
    if (ran(size, 'D'))
      say(
        d && d.throughput >= 0.9,
        `D get by id >= 0.9x baseline at ${size}: ${fixed(d?.throughput, 2)}x (CPU ${fixed(d?.cpu, 2)}x)`,
        flagOf(size, 'D', 'service'),
      );
    const e = ratioOf(size, 'E', 'service');
    if (ran(size, 'E'))
      say(
        e && e.throughput >= 0.85,
        `E create >= 0.85x baseline at ${size}: ${fixed(e?.throughput, 2)}x (CPU ${fixed(e?.cpu, 2)}x)`,
        flagOf(size, 'E', 'service'),
      );
    const f = ratioOf(size, 'F-D', 'gateway');
    if (ran(size, 'F-D'))
      say(
        f && f.throughput >= 0.85,
        `F-D the local gateway >= 0.85x direct at ${size}: ${fixed(f?.throughput, 2)}x`,
        flagOf(size, 'F-D', 'gateway'),
      );
    const beforeE = find(run.scenarios, size, 'E', 'before');
    if (beforeE && !beforeE.unavailable) {
      const row = settled(beforeE, 'service', run.options.spread);
      const [ours, theirs] = [summarise(beforeE, 'service'), summarise(beforeE, 'before')];
      // No worse: the CPU ratio (before's µs over ours) short of 1 by less than the spread a stable row may have.
      say(
        row && row.cpu >= 1 - run.options.spread / 100,
        `E CPU per create no worse than before's (within the ${run.options.spread}% spread) at ${size}: CPU ${fixed(row?.cpu, 2)}x over its last ${WINDOW} rounds (service ${fixed(ours?.chainCpu)} µs, before ${fixed(theirs?.chainCpu)} µs a create, medians of every round)`,
        undecided(beforeE, 'service', row, run.options.spread),
      );
    }
    const o = find(run.scenarios, size, 'O');
    const overload = ratioOf(size, 'O', 'service');
    const refused = o && summarise(o, 'service')?.statuses['503'];
    if (o && !o.unavailable) {
      say(
        overload && overload.throughput >= 0.95 && !refused,
        `O default settings' goodput >= 0.95x the unbounded queue's, no 503, at ${size}: ${fixed(overload?.throughput, 2)}x, ${refused ?? 0} × 503`,
        flagOf(size, 'O', 'service'),
      );
    }
  }
  for (const size of sizes) {
    const k = find(run.scenarios, size, 'K');
    if (!k || k.unavailable) continue;
    const vs = kongAgainstKeyAuth(k);
    const busy = Math.max(...(['kong-ours', 'kong-key-auth'] as const).map((t) => summarise(k, t)?.otherCores ?? 0));
    const flagged =
      vs.rounds < WINDOW
        ? `${vs.rounds} rounds with both valid, ${WINDOW} needed`
        : busy > BUSY_CORES
          ? `machine busy (${busy.toFixed(2)} other cores)`
          : undefined;
    say(
      vs.rounds ? vs.cpu <= 2 : undefined,
      `K our Kong's CPU per request (worker, log filters, Redis) <= 2x Kong's key-auth + acl's at ${size}: ${fixed(vs.cpu, 2)}x`,
      flagged,
    );
    say(
      vs.rounds ? vs.throughput >= 0.8 : undefined,
      `K our Kong's throughput >= 0.8x Kong's key-auth + acl's at ${size}: ${fixed(vs.throughput, 2)}x`,
      flagged,
    );
  }
  const largest = Math.max(...sizes);
  for (const target of ['gateway', 'kong-ours'] as const) {
    // gzip over plain measured in one place (loopback: no link), when both were.
    const ratiosAt = (link: string | undefined) => {
      const [plain, gzip] = [false, true].map((z) =>
        run.syncs.find((s) => s.target === target && s.gzip === z && s.link === link && s.size === largest),
      );
      return plain && gzip ? syncRatios({ plain: plain.runs, gzip: gzip.runs }) : undefined;
    };
    const loopback = ratiosAt(undefined);
    if (!loopback) continue;
    const rate = run.syncs.find((s) => s.target === target && s.link !== undefined)?.link;
    const across = rate ? ratiosAt(rate) : undefined;
    const name = target === 'gateway' ? 'the local gateway' : 'real Kong (our configuration)';
    const onLoopback = `on loopback ${percent(loopback.bytes)}, ${loopback.time.toFixed(2)}x the time`;
    if (!across) {
      say(
        loopback.bytes <= 0.15 && loopback.time <= 1,
        `S full sync through ${name} with gzip moves <= 15% of the bytes in no more time, at ${largest}: ${onLoopback} (no link measured)`,
      );
      continue;
    }
    say(
      across.bytes <= 0.15 && across.time <= 1,
      `S full sync through ${name} with gzip moves <= 15% of the bytes in no more time across a ${rate} link, at ${largest}: ${percent(across.bytes)}, ${across.time.toFixed(2)}x the time (${onLoopback})`,
    );
  }
  for (const w of run.webhooks ?? []) {
    const busy = w.otherCores > BUSY_CORES ? `machine busy (${w.otherCores.toFixed(2)} other cores)` : undefined;
    const fenced = (w.designs ?? []).find((d) => d.design === 'fenced');
    const today = (w.designs ?? []).find((d) => d.design === 'today');
    if (!fenced) continue;
    const complete = fenced.latency.delivered === fenced.latency.expected && fenced.latency.expected > 0;
    say(
      fenced.latency.expected > 0 ? complete && fenced.worstP50 <= 1000 && fenced.worstP99 <= 5000 : undefined,
      `W commit to delivery p50 <= 1 s and p99 <= 5 s on every subscription, every delivery made, at ${w.rate} change/s to ${w.subscriptions} subscriptions, ${w.size}: worst p50 ${fixed(fenced.worstP50)} ms, worst p99 ${fixed(fenced.worstP99)} ms, ${fenced.latency.delivered} of ${fenced.latency.expected}`,
      busy,
    );
    say(
      today && Number.isFinite(today.cpuPerEventMs) && Number.isFinite(fenced.cpuPerEventMs)
        ? fenced.cpuPerEventMs <= today.cpuPerEventMs / 2
        : undefined,
      `W CPU per delivered event (dispatchers + MariaDB) at most half of today's design, ${w.size}: ${fixed(fenced.cpuPerEventMs, 3)} ms vs ${today ? fixed(today.cpuPerEventMs, 3) : '–'} ms`,
      busy,
    );
  }

  // Only N's service runs the Dockerfile's flags alone; the paired rows add --single-threaded-gc, which delays major GCs.
  const peaks = run.scenarios.flatMap((r) => r.measurements.flatMap((m) => m.peakRssBytes['service-flags'] ?? []));
  const peak = peaks.length ? Math.max(...peaks) : undefined;
  say(
    peak === undefined ? undefined : peak <= 160 * 1024 * 1024,
    `peak RSS of the service as deployed (N, N-A) <= 160 MiB: ${peak === undefined ? 'N not run' : `${MiB(peak)} MiB`}`,
  );
  return out;
}

export function markdownReport(run: RunResult): string {
  const machine = Object.entries(run.machine)
    .map(([name, value]) => `${name}: ${value}`)
    .join('; ');
  const o = run.options;
  return [
    `Run ${run.startedAt} (${run.minutes.toFixed(1)} min), \`npm run bench -- ${String(o.argv ?? '')}\`.`,
    `Machine: ${machine}.`,
    ...(run.before
      ? [
          `Before (--before): ${checkoutLine(run.before)}; its service from its own dist with its own Dockerfile's flags, on jobs_bench_<size>_before, migrated by its own start-up and holding a copy of the same jobs; ` +
            `the "service vs before" rows of ${BEFORE_SCENARIOS.join(', ')} are measured as the pairs are.`,
        ]
      : []),
    `Rounds of ${o.duration} s after a ${o.warmup} s warm-up, ${o.connections} connections a target (O: ${String(o.overloadConnections)}), wrk with ${String(o.threads)} thread(s) a target; ` +
      `${o.inTurn ? 'every target measured in turn (--in-turn)' : 'where each side is one process, subject and reference measured at once, both on one core, wrk on the others; otherwise in turn'}; ` +
      `each scenario runs at least ${o.rounds} and at most ${o.maxRounds} rounds, until the last 3 agree within ${o.spread}% both ways. ` +
      `Ratio = subject / reference, the median of those rounds: throughput (req/s; O: 2xx/s) and CPU (reference's CPU µs per request / subject's, whole chain). ` +
      `Service with LOG_LEVEL=info to /dev/null, DB_POOL_SIZE=${o.pool}, \`node ${serviceNodeFlags().join(' ')}\` (the Dockerfile's CMD) for the service and the baseline${o.inTurn ? '' : ', with --single-threaded-gc (they share a core)'}. ` +
      'How to read a row: docs/performance.md.',
    markdownTable(run),
    '',
    'Targets (valid rows only):',
    '',
    ...targets(run),
  ].join('\n');
}

export const DOCS_START = '<!-- bench:latest -->';
export const DOCS_END = '<!-- /bench:latest -->';

/** Replaces the latest-run section of a docs page (between the bench:latest markers), adding the markers at the end when missing. */
export function writeLatest(docsPath: string, markdown: string): void {
  const page = readFileSync(docsPath, 'utf8');
  const start = page.indexOf(DOCS_START);
  const end = page.indexOf(DOCS_END);
  const section = `${DOCS_START}\n${markdown}\n${DOCS_END}`;
  const updated =
    start >= 0 && end > start
      ? `${page.slice(0, start)}${section}${page.slice(end + DOCS_END.length)}`
      : `${page.trimEnd()}\n\n${section}\n`;
  writeFileSync(docsPath, updated);
}

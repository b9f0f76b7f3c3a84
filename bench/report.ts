/**
 * Turns the measurements into figures: medians and spreads per scenario, the ratio to the raw
 * baseline, the issue's targets with their measured values, a markdown table (bench/results/
 * and the README) and the JSON of everything measured.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { LoadResult } from './load';
import type { ScenarioCheck } from './check';
import type { ScenarioKey } from './scenarios';
import { serviceNodeFlags } from './servers';

export type Target = 'service' | 'baseline' | 'gateway' | 'proxy';

export interface Measurement extends LoadResult {
  round: number;
  target: Target;
  mode: 'load' | 'one at a time';
  reqPerSec: number;
  /** CPU microseconds per request, per process involved (the gateway row has both). */
  cpuMicrosPerRequest: Partial<Record<Target, number>>;
  peakRssBytes: Partial<Record<Target, number>>;
}

export interface ScenarioResult {
  size: number;
  key: ScenarioKey;
  title: string;
  path: string;
  unavailable?: string;
  check?: ScenarioCheck;
  measurements: Measurement[];
}

export interface RunResult {
  startedAt: string;
  finishedAt: string;
  minutes: number;
  machine: Record<string, string | number>;
  options: Record<string, unknown>;
  tables: Array<{ size: number; rows: number; seededSeconds: number }>;
  scenarios: ScenarioResult[];
}

export interface Summary {
  runs: number;
  reqPerSec: number;
  min: number;
  max: number;
  p50: number;
  p99: number;
  cpu: Partial<Record<Target, number>>;
  peakRss: Partial<Record<Target, number>>;
  non2xx: number;
  errors: number;
  mode: Measurement['mode'];
}

export function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function summarise(result: ScenarioResult, target: Target): Summary | undefined {
  const runs = result.measurements.filter((m) => m.target === target);
  if (runs.length === 0) return undefined;
  const rates = runs.map((m) => m.reqPerSec);
  const processes = ['service', 'baseline', 'gateway', 'proxy'] as const;
  const cpu: Summary['cpu'] = {};
  const peakRss: Summary['peakRss'] = {};
  for (const name of processes) {
    const used = runs.map((m) => m.cpuMicrosPerRequest[name]).filter((v): v is number => v !== undefined);
    if (used.length) cpu[name] = median(used);
    const peaks = runs.map((m) => m.peakRssBytes[name]).filter((v): v is number => v !== undefined);
    if (peaks.length) peakRss[name] = Math.max(...peaks);
  }
  const non2xx = runs.reduce((sum, m) => sum + Object.entries(m.statuses).filter(([code]) => !code.startsWith('2')).reduce((s, [, n]) => s + n, 0), 0);
  return {
    runs: runs.length,
    reqPerSec: median(rates),
    min: Math.min(...rates),
    max: Math.max(...rates),
    p50: median(runs.filter((m) => m.requests > 0).map((m) => m.p50)),
    p99: median(runs.filter((m) => m.requests > 0).map((m) => m.p99)),
    cpu,
    peakRss,
    non2xx,
    errors: runs.reduce((sum, m) => sum + m.errors, 0),
    mode: runs[0]!.mode,
  };
}

const MiB = (bytes: number | undefined) => (bytes === undefined ? '–' : (bytes / 1024 / 1024).toFixed(0));
const fixed = (value: number | undefined, digits = 0) => (value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits));
const rate = (s: Summary) => `${fixed(s.reqPerSec, s.reqPerSec < 10 ? 2 : 0)} (${fixed(s.min, s.min < 10 ? 2 : 0)}–${fixed(s.max, s.max < 10 ? 2 : 0)})`;
const signed = (value: number) => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(2)}`;
const latency = (s: Summary) => `${fixed(s.p50, 2)} / ${fixed(s.p99, 2)}`;

function find(results: ScenarioResult[], size: number, key: ScenarioKey) {
  return results.find((r) => r.size === size && r.key === key);
}

function notes(result: ScenarioResult, service: Summary | undefined, other: Summary | undefined): string {
  const out: string[] = [];
  if (result.check && result.check.body !== 'identical' && !result.check.body.startsWith('identical')) out.push(`body ${result.check.body}`);
  if (result.check && result.check.sql.startsWith('DIFFERS')) out.push('baseline SQL differs from the service\'s');
  for (const [name, s] of [['service', service], ['other', other]] as const) {
    if (s && (s.non2xx || s.errors)) out.push(`${name === 'service' ? 'service/gateway' : 'baseline'}: ${s.non2xx} non-2xx, ${s.errors} errors`);
  }
  if (service?.mode === 'one at a time') out.push('slow: timed one request at a time');
  return out.join('; ');
}

export function markdownTable(run: RunResult): string {
  const lines: string[] = [];
  for (const { size, rows, seededSeconds } of run.tables) {
    lines.push(
      '',
      `**${size.toLocaleString('en-US')} jobs** (${rows.toLocaleString('en-US')} rows${seededSeconds ? `, seeded in ${seededSeconds.toFixed(0)} s` : ''})`,
      '',
      '| Scenario | Service req/s (min–max) | p50 / p99 ms | Baseline req/s (min–max) | p50 / p99 ms | Ratio | CPU µs/req svc / base | Peak RSS MiB svc / base | Notes |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const result of run.scenarios.filter((r) => r.size === size)) {
      const label = `${result.key} ${result.title}`;
      if (result.unavailable) {
        lines.push(`| ${label} | n/a | | | | | | | ${result.unavailable} |`);
        continue;
      }
      if (result.key.startsWith('F-')) {
        const gateway = summarise(result, 'gateway');
        const direct = find(run.scenarios, size, result.key.slice(2) as ScenarioKey);
        const directSummary = direct && summarise(direct, 'service');
        if (!gateway) continue;
        const ratio = directSummary ? `${(gateway.reqPerSec / directSummary.reqPerSec).toFixed(2)}x direct` : '–';
        const added = directSummary ? `, ${signed(gateway.p50 - directSummary.p50)} ms p50` : '';
        lines.push(
          `| ${label} | ${rate(gateway)} | ${latency(gateway)} | (direct: ${directSummary ? rate(directSummary) : '–'}) | | ${ratio}${added} | gw ${fixed(gateway.cpu.gateway)} + svc ${fixed(gateway.cpu.service)} | gw ${MiB(gateway.peakRss.gateway)} | ${notes(result, gateway, undefined)} |`,
        );
        const proxy = summarise(result, 'proxy');
        if (proxy) {
          const proxyRatio = directSummary ? `${(proxy.reqPerSec / directSummary.reqPerSec).toFixed(2)}x direct, ${signed(proxy.p50 - directSummary.p50)} ms p50` : '–';
          lines.push(
            `| ${result.key}' the same through a bare proxy (F's floor) | ${rate(proxy)} | ${latency(proxy)} | | | ${proxyRatio} | proxy ${fixed(proxy.cpu.proxy)} + svc ${fixed(proxy.cpu.service)} | proxy ${MiB(proxy.peakRss.proxy)} | node:http + undici, no plugins |`,
          );
        }
        continue;
      }
      const service = summarise(result, 'service');
      const baseline = summarise(result, 'baseline');
      if (!service) continue;
      const ratio = baseline ? `${(service.reqPerSec / baseline.reqPerSec).toFixed(2)}x` : '–';
      lines.push(
        `| ${label} | ${rate(service)} | ${latency(service)} | ${baseline ? rate(baseline) : '–'} | ${baseline ? latency(baseline) : '–'} | ${ratio} | ${fixed(service.cpu.service)} / ${fixed(baseline?.cpu.baseline)} | ${MiB(service.peakRss.service)} / ${MiB(baseline?.peakRss.baseline)} | ${notes(result, service, baseline)} |`,
      );
    }
  }
  return lines.join('\n');
}

/** The issue's targets (issue 10, "the work the numbers ask for"), each with what was measured. */
export function targets(run: RunResult): string[] {
  const sizes = run.tables.map((t) => t.size);
  const out: string[] = [];
  const say = (met: boolean | undefined, text: string) => out.push(`- ${met === undefined ? 'not measured' : met ? 'met' : 'NOT met'}: ${text}`);
  for (const size of sizes) {
    const d = find(run.scenarios, size, 'D');
    const service = d && summarise(d, 'service');
    const baseline = d && summarise(d, 'baseline');
    const ratio = service && baseline ? service.reqPerSec / baseline.reqPerSec : undefined;
    say(ratio === undefined ? undefined : ratio >= 0.85, `D get by id >= 0.85x baseline at ${size}: ${fixed(ratio, 2)}x`);
  }
  const smallest = Math.min(...sizes);
  const largest = Math.max(...sizes);
  for (const key of ['A', 'B', 'G'] as const) {
    const small = find(run.scenarios, smallest, key);
    const large = find(run.scenarios, largest, key);
    const a = small && summarise(small, 'service');
    const b = large && summarise(large, 'service');
    const ratio = a && b && largest >= 1_000_000 && smallest <= 10_000 ? b.reqPerSec / a.reqPerSec : undefined;
    say(ratio === undefined ? undefined : ratio >= 0.5, `${key} at 1M >= 0.5x its req/s at 10k: ${ratio === undefined ? `needs --sizes with 10000 and 1000000 (ran ${sizes.join(', ')})` : `${ratio.toFixed(2)}x`}`);
  }
  if (sizes.includes(100_000)) {
    const c = find(run.scenarios, 100_000, 'C');
    const a = find(run.scenarios, 100_000, 'A');
    const deep = c && summarise(c, 'service');
    const first = a && summarise(a, 'service');
    const ratio = deep && first ? deep.p50 / first.p50 : undefined;
    say(ratio === undefined ? undefined : ratio <= 2, `C page 2500 p50 <= 2x page 1 (A) p50 at 100k: ${fixed(deep?.p50, 2)} ms vs ${fixed(first?.p50, 2)} ms (${fixed(ratio, 2)}x)`);
  }
  for (const size of sizes) {
    const f = find(run.scenarios, size, 'F-D');
    const d = find(run.scenarios, size, 'D');
    const gateway = f && summarise(f, 'gateway');
    const direct = d && summarise(d, 'service');
    if (!gateway || !direct) continue;
    const added = gateway.p50 - direct.p50;
    const ratio = gateway.reqPerSec / direct.reqPerSec;
    const proxy = f && summarise(f, 'proxy');
    const floor = proxy ? ` (a bare node:http + undici proxy on the same machine: ${signed(proxy.p50 - direct.p50)} ms, ${(proxy.reqPerSec / direct.reqPerSec).toFixed(2)}x)` : '';
    say(added <= 1.5 && ratio >= 0.85, `F the gateway adds <= 1.5 ms to D's p50 and stays >= 0.85x direct at ${size}: ${signed(added)} ms, ${ratio.toFixed(2)}x${floor}`);
  }
  const peaks = run.scenarios.flatMap((r) => r.measurements.map((m) => m.peakRssBytes.service ?? 0));
  const peak = peaks.length ? Math.max(...peaks) : undefined;
  say(peak === undefined ? undefined : peak <= 160 * 1024 * 1024, `peak RSS of the service <= 160 MiB: ${MiB(peak)} MiB`);
  return out;
}

export function markdownReport(run: RunResult): string {
  const machine = Object.entries(run.machine)
    .map(([name, value]) => `${name}: ${value}`)
    .join('; ');
  return [
    `Run ${run.startedAt} (${run.minutes.toFixed(1)} min), \`npm run bench -- ${String(run.options.argv ?? '')}\`.`,
    `Machine: ${machine}.`,
    `Each figure: median of ${run.options.rounds} interleaved rounds of ${run.options.duration} s (spread min–max), ${run.options.connections} connections, after a ${run.options.warmup} s warm-up; autocannon in its own process; service with LOG_LEVEL=info to stdout (/dev/null here), DB_POOL_SIZE=${run.options.pool} and \`node ${serviceNodeFlags().join(' ')}\` (the Dockerfile's CMD) for both servers. Ratio = service / baseline req/s (F rows: gateway, or the bare proxy, / direct service).`,
    markdownTable(run),
    '',
    'Targets (issue 10):',
    '',
    ...targets(run),
  ].join('\n');
}

const START = '<!-- bench:latest -->';
const END = '<!-- /bench:latest -->';

/** Replaces the README's latest table (between the bench:latest markers); false when the markers are missing. */
export function updateReadme(readmePath: string, markdown: string): boolean {
  const readme = readFileSync(readmePath, 'utf8');
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) return false;
  writeFileSync(readmePath, `${readme.slice(0, start + START.length)}\n${markdown}\n${readme.slice(end)}`);
  return true;
}

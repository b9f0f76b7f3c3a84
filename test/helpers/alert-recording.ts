/**
 * prometheus/alerts.yml's rules on series recorded from a real fault: a test scrapes a process's
 * /metrics (or finds it gone) while it causes the fault, and this turns those scrapes into a
 * `promtool test rules` case, one scrape a minute, Prometheus' own `job`, `instance` and `up`
 * added as its scrape would add them. The alert must fire at the last scrape on the recording and
 * stay quiet on the same number of scrapes that repeat the first (healthy) one.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';

const ROOT = path.resolve(__dirname, '..', '..');
export const ALERTS_FILE = path.join(ROOT, 'prometheus', 'alerts.yml');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function alertRules(): AlertRule[] {
  const doc = parse(readFileSync(ALERTS_FILE, 'utf8')) as { groups: Array<{ rules: AlertRule[] }> };
  return doc.groups.flatMap((group) => group.rules.filter((rule) => rule.alert));
}

/** One scrape target's recording: its /metrics text at each scrape, null where the scrape failed. */
export interface Recording {
  job: string;
  instance: string;
  scrapes: Array<string | null>;
}

/** The /metrics text, or null when nothing answers (a stopped process): what Prometheus records as up 0. */
export async function scrape(url: string): Promise<string | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    return res.status === 200 ? await res.text() : null;
  } catch {
    return null;
  }
}

/** name{labels} -> value, for every sample line of an exposition. */
function samples(text: string): Map<string, { name: string; labels: string; value: string }> {
  const out = new Map<string, { name: string; labels: string; value: string }>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+\d+)?$/.exec(line.trim());
    if (!m || line.startsWith('#')) continue;
    out.set(`${m[1]}${m[2] ?? ''}`, { name: m[1]!, labels: m[2] ? m[2].slice(1, -1) : '', value: m[3]! });
  }
  return out;
}

const promValue = (v: string) => (v === '+Inf' ? 'Inf' : v);

/** promtool input_series for the recordings, only the metrics the alert's expression names (and up). */
function inputSeries(rule: AlertRule, recordings: Recording[]): Array<{ series: string; values: string }> {
  const named = (name: string) => name === 'up' || new RegExp(`\\b${name}\\b`).test(rule.expr);
  return recordings.flatMap((rec) => {
    const target = `job="${rec.job}",instance="${rec.instance}"`;
    const parsed = rec.scrapes.map((text) => (text === null ? null : samples(text)));
    const keys = new Set(parsed.flatMap((p) => (p ? [...p.keys()] : [])));
    const series = [...keys].flatMap((key) => {
      const first = parsed.find((p) => p?.has(key))!.get(key)!;
      if (!named(first.name)) return [];
      // A failed scrape marks the target's series stale, as Prometheus does.
      const values = parsed.map((p) => (p === null ? 'stale' : p.has(key) ? promValue(p.get(key)!.value) : '_'));
      return [
        { series: `${first.name}{${[first.labels, target].filter(Boolean).join(',')}}`, values: values.join(' ') },
      ];
    });
    return [...series, { series: `up{${target}}`, values: parsed.map((p) => (p === null ? '0' : '1')).join(' ') }];
  });
}

/** One evaluation of a recorded case: at scrape `at` (0-based), `alert` fires with exactly these labels (none: quiet). */
export interface RecordedCheck {
  at: number;
  expected: Array<Record<string, string>>;
}

export interface RecordedCase {
  alert: string;
  recordings: Recording[];
  checks: RecordedCheck[];
  /** Seconds between scrapes, and between rule evaluations (default 60). */
  intervalSeconds?: number;
  /** What was recorded, for a reader of the file (promtool's test group name). */
  name?: string;
}

/** A `promtool test rules` case: the recordings as input series, each check an alert_rule_test. */
function promtoolCase(rule: AlertRule, { recordings, checks, intervalSeconds = 60, name }: RecordedCase) {
  return {
    ...(name ? { name } : {}),
    interval: `${intervalSeconds}s`,
    input_series: inputSeries(rule, recordings),
    alert_rule_test: checks.map(({ at, expected }) => ({
      eval_time: `${at * intervalSeconds}s`,
      alertname: rule.alert,
      exp_alerts: expected.map((labels) => ({
        exp_labels: { ...rule.labels, ...labels },
        exp_annotations: rule.annotations,
      })),
    })),
  };
}

/** Where recorded cases are kept, committed: test/prometheus/alerts.test.ts runs promtool on every file there. */
export const RECORDED_DIR = path.join(ROOT, 'prometheus', 'recorded');

/**
 * Runs promtool on recorded cases (every case at the smallest interval among them for evaluation).
 * With RECORD_ALERT_FIXTURES=1 in the environment the same file is also written to
 * prometheus/recorded/<fixture>.test.yml, to be committed. Returns promtool's output; it ends in
 * SUCCESS when every check holds.
 */
export function checkRecordedCases(fixture: string, cases: RecordedCase[]): string {
  const rules = alertRules();
  const tests = cases.map((c) => {
    const rule = rules.find((r) => r.alert === c.alert);
    if (!rule) throw new Error(`no alert ${c.alert} in ${ALERTS_FILE}`);
    return promtoolCase(rule, c);
  });
  const evaluation = Math.min(...cases.map((c) => c.intervalSeconds ?? 60));
  const body = (rulesFile: string) =>
    `# Recorded from a real fault by ${path.relative(ROOT, expect.getState().testPath ?? 'a test')} (test/helpers/alert-recording.ts); RECORD_ALERT_FIXTURES=1 writes it again.
${stringify({ rule_files: [rulesFile], evaluation_interval: `${evaluation}s`, tests })}`;
  if (process.env.RECORD_ALERT_FIXTURES === '1') {
    mkdirSync(RECORDED_DIR, { recursive: true });
    writeFileSync(path.join(RECORDED_DIR, `${fixture}.test.yml`), body(path.relative(RECORDED_DIR, ALERTS_FILE)));
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'alert-recording-'));
  try {
    const file = path.join(dir, `${fixture}.test.yml`);
    writeFileSync(file, body(ALERTS_FILE));
    const out = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8', timeout: 30_000 });
    if (out.error) throw out.error;
    return `${out.stdout}${out.stderr}`.trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs promtool on the recordings: `alert` fires with exactly `expected` (each its labels besides
 * the rule's own) at the last scrape, and nothing fires when every scrape is the first one.
 * Returns promtool's output; it ends in SUCCESS when both hold. With a `fixture` name it is kept
 * as checkRecordedCases keeps it.
 */
export function checkRecordedAlert(
  alert: string,
  recordings: Recording[],
  expected: Array<Record<string, string>>,
  fixture?: string,
): string {
  const last = Math.max(...recordings.map((r) => r.scrapes.length)) - 1;
  const healthy = recordings.map((r) => ({ ...r, scrapes: r.scrapes.map(() => r.scrapes[0]!) }));
  return checkRecordedCases(fixture ?? alert, [
    { alert, recordings, checks: [{ at: last, expected }] },
    { alert, recordings: healthy, checks: [{ at: last, expected: [] }] },
  ]);
}

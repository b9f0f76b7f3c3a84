/**
 * prometheus/alerts.yml ships tested: promtool (Debian's `prometheus` package; .ci/run installs it)
 * loads it through prometheus.yml and runs its unit tests, every alert is shown firing and quiet,
 * names a runbook section of docs/operations.md that exists, and compose's Prometheus gets the file
 * where prometheus.yml looks for it. The series recorded from real faults: checkRecordedAlert in
 * the fault tests (test/helpers/alert-recording.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { alertRules } from '../helpers/alert-recording';

const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const promtool = (...args: string[]) => {
  const out = spawnSync('promtool', args, { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  if (out.error) throw new Error(`promtool: ${out.error.message} (apt-get install prometheus)`);
  return { status: out.status, output: `${out.stdout}${out.stderr}` };
};

test('prometheus.yml loads alerts.yml, and promtool passes its unit tests', () => {
  const config = promtool('check', 'config', 'prometheus/prometheus.yml');
  expect([config.status, config.output]).toEqual([0, expect.stringMatching(/SUCCESS: \d+ rule files? found/)]);
  const tests = promtool('test', 'rules', 'prometheus/alerts.test.yml');
  expect([tests.status, tests.output]).toEqual([0, expect.stringContaining('SUCCESS')]);
});

test('every alert has a unit test where it fires and one where it stays quiet', () => {
  const doc = parse(read('prometheus/alerts.test.yml')) as {
    tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
  };
  const cases = doc.tests.flatMap((t) => t.alert_rule_test);
  const missing = alertRules().flatMap(({ alert }) => [
    ...(cases.some((c) => c.alertname === alert && c.exp_alerts.length > 0) ? [] : [`${alert} never fires`]),
    ...(cases.some((c) => c.alertname === alert && c.exp_alerts.length === 0) ? [] : [`${alert} never shown quiet`]),
  ]);
  expect(missing).toEqual([]);
});

test('every alert says what it means and links a runbook section of docs/operations.md that exists', () => {
  const anchors = new Set(
    read('docs/operations.md')
      .split('\n')
      .filter((l) => /^#{2,4} /.test(l))
      .map((l) =>
        l
          .replace(/^#+ /, '')
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
  );
  const problems = alertRules().flatMap((rule) => {
    const url = rule.annotations?.runbook_url ?? '';
    const m = /^docs\/operations\.md#(.+)$/.exec(url);
    return [
      ...(rule.annotations?.summary ? [] : [`${rule.alert}: no summary`]),
      ...(m && anchors.has(m[1]!) ? [] : [`${rule.alert}: runbook_url ${url} is no section of docs/operations.md`]),
      ...(rule.labels?.severity ? [] : [`${rule.alert}: no severity`]),
    ];
  });
  expect(problems).toEqual([]);
});

test("compose's Prometheus mounts alerts.yml where prometheus.yml's rule_files looks", () => {
  const config = parse(read('prometheus/prometheus.yml')) as { rule_files: string[] };
  const compose = parse(read('docker-compose.yml'), { merge: true }) as {
    services: Record<string, { volumes?: string[] }>;
  };
  const mounts = compose.services.prometheus!.volumes ?? [];
  for (const file of config.rule_files) {
    expect(mounts).toContain(`./prometheus/${file}:/etc/prometheus/${file}:ro`);
  }
  expect(config.rule_files).toContain('alerts.yml');
});

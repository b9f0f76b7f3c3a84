/**
 * prometheus/alerts.yml ships tested: promtool (Debian's `prometheus` package; .ci/run installs it)
 * loads it through prometheus.yml and runs its unit tests and the cases recorded from real faults
 * (prometheus/recorded/, written by the fault tests through test/helpers/alert-recording.ts), every
 * alert is shown firing and quiet, names a runbook section of docs/alerts.md that exists, and
 * compose's Prometheus gets the file where prometheus.yml looks for it.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { alertRules, RECORDED_DIR } from '../helpers/alert-recording';

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

interface RuleTests {
  tests: Array<{ alert_rule_test: Array<{ alertname: string; eval_time: string; exp_alerts: unknown[] }> }>;
}
const recorded = readdirSync(RECORDED_DIR)
  .filter((f) => f.endsWith('.test.yml'))
  .map((f) => path.join('prometheus', 'recorded', f));

test('the alerts pass on the series recorded from real faults', () => {
  expect(recorded.length).toBeGreaterThan(0);
  const tests = promtool('test', 'rules', ...recorded);
  expect([tests.status, tests.output]).toEqual([0, expect.not.stringContaining('FAILED')]);
});

test('the recordings show the database outage firing PartnerErrorsHigh and resolving within 2 minutes, the absent dispatcher and the secret 401s', () => {
  const cases = (file: string) =>
    (parse(read(`prometheus/recorded/${file}`)) as RuleTests).tests.flatMap((t) => t.alert_rule_test);
  const seconds = (t: string) => Number(/^(\d+)s$/.exec(t)?.[1] ?? NaN);
  const outage = cases('database-outage.test.yml').filter((c) => c.alertname === 'PartnerErrorsHigh');
  // The recording's first check fires during the outage, the last is quiet within 2 minutes of its end.
  expect(outage.map((c) => c.exp_alerts.length > 0)).toEqual([false, true, false]);
  // The test group's name says when the database was away, in the recording's seconds.
  const doc = parse(read('prometheus/recorded/database-outage.test.yml')) as { tests: Array<{ name?: string }> };
  const [, start, end] = /database away from (\d+)s to (\d+)s/.exec(doc.tests[0]!.name ?? '')!.map(Number);
  expect(end! - start!).toBeGreaterThanOrEqual(180);
  expect(seconds(outage[1]!.eval_time)).toBeLessThanOrEqual(end!);
  expect(seconds(outage[2]!.eval_time) - end!).toBeLessThanOrEqual(120);
  for (const [file, alert] of [
    ['webhook-dispatcher-absent.test.yml', 'WebhookDispatcherAbsent'],
    ['gateway-secret-mismatch.test.yml', 'PartnersGetGatewaySecret401s'],
  ] as const) {
    const shown = cases(file).filter((c) => c.alertname === alert);
    expect([alert, shown.some((c) => c.exp_alerts.length > 0), shown.some((c) => c.exp_alerts.length === 0)]).toEqual([
      alert,
      true,
      true,
    ]);
  }
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

test('every alert says what it means and links a runbook section of docs/alerts.md that exists', () => {
  const anchors = new Set(
    read('docs/alerts.md')
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
    const m = /^docs\/alerts\.md#(.+)$/.exec(url);
    return [
      ...(rule.annotations?.summary ? [] : [`${rule.alert}: no summary`]),
      ...(m && anchors.has(m[1]!) ? [] : [`${rule.alert}: runbook_url ${url} is no section of docs/alerts.md`]),
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

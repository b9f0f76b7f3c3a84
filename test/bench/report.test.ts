/**
 * How npm run bench turns measurements into rows (bench/report.ts): ratios
 * read two ways from rounds measured together, invalid windows left out, rows flagged, and where
 * the table is written.
 */
import type { Measurement } from '../../bench/measure';
import { parseOptions } from '../../bench/options';
import { markdownTable, roundRatios, settled, targets, type RunResult, type ScenarioResult } from '../../bench/report';
import type { Target } from '../../bench/scenarios';
import { benchRun, benchWindow as window } from '../helpers/bench-run';

function scenario(measurements: Measurement[], rounds = Math.max(...measurements.map((m) => m.round))): ScenarioResult {
  return {
    size: 100_000,
    key: 'D',
    title: 'get by id (random)',
    path: '/api/v1/jobs/',
    comparison: { subjects: ['service'], reference: 'baseline' },
    measurements,
    rounds,
  };
}

const runOf = (result: ScenarioResult): RunResult => benchRun(100_000, { scenarios: [result] });

const rowOf = (run: RunResult) =>
  markdownTable(run)
    .split('\n')
    .find((line) => line.startsWith('| D '))!;

test('each round gives one ratio from the two windows measured in it, throughput and CPU', () => {
  const result = scenario([
    window('service', 1, [900, 550]),
    window('baseline', 1, [1000, 500]),
    window('baseline', 2, [2000, 500]),
    window('service', 2, [1800, 500]),
  ]);
  expect(roundRatios(result, 'service')).toEqual([
    { round: 1, throughput: 0.9, cpu: 500 / 550 },
    { round: 2, throughput: 0.9, cpu: 1 },
  ]);
});

test('a row is stable once its last three rounds agree within the spread asked for, and its figure is their median', () => {
  const noisy = [0.7, 0.95, 0.9, 0.91, 0.92];
  const result = scenario(
    noisy.flatMap((ratio, i) => [
      window('service', i + 1, [1000 * ratio, 500 / ratio]),
      window('baseline', i + 1, [1000, 500]),
    ]),
  );
  const row = settled(result, 'service', 5)!;
  expect(row.stable).toBe(true);
  expect(row.window.map((r) => r.round)).toEqual([3, 4, 5]);
  expect(row.throughput).toBeCloseTo(0.91);
  expect(row.spread).toBeCloseTo(0.02 / 0.91);

  const early = settled(scenario(result.measurements.filter((m) => m.round <= 3)), 'service', 5)!;
  expect(early.stable).toBe(false);
  expect(rowOf(runOf(scenario(result.measurements.filter((m) => m.round <= 2))))).toContain(
    'not stable within 2 rounds (2 valid rounds, 3 needed)',
  );
  expect(
    rowOf(
      runOf(
        scenario(
          result.measurements.filter((m) => m.round <= 3),
          10,
        ),
      ),
    ),
  ).toMatch(/not stable within 10 rounds \(spread 27\.8%, asked < 5%\)/);
});

test('a window where the generator was saturated gives no ratio, and a row with none says invalid', () => {
  const saturatedWindow = { invalid: 'load generator saturated (91% busy)', generatorBusy: 0.91 };
  const result = scenario([
    window('service', 1, [1000, 500], saturatedWindow),
    window('baseline', 1, [1000, 500]),
    window('service', 2, [900, 550]),
    window('baseline', 2, [1000, 500]),
  ]);
  expect(roundRatios(result, 'service').map((r) => r.round)).toEqual([2]);

  const none = scenario([window('service', 1, [1000, 500], saturatedWindow), window('baseline', 1, [1000, 500])]);
  const row = rowOf(runOf(none));
  expect(row).toContain('| invalid |');
  expect(row).toContain('1 measurement(s) invalid: load generator saturated (91% busy)');
});

test('a row whose throughput and CPU ratios are more than 10% apart is flagged; within 10% it is not', () => {
  const rounds = (cpuOfService: number) =>
    scenario(
      [1, 2, 3].flatMap((round) => [
        window('service', round, [900, cpuOfService]),
        window('baseline', round, [1000, 500]),
      ]),
    );
  expect(rowOf(runOf(rounds(700)))).toContain('**ratios disagree** (throughput 0.90 vs CPU 0.71');
  expect(rowOf(runOf(rounds(560)))).not.toContain('disagree');
  expect(rowOf(runOf(rounds(560)))).toContain('| 0.90x / 0.89x |');
  // How busy each process was says which one set the pace.
  expect(rowOf(runOf(rounds(560)))).toContain('| service 560 (0.50 core) ; baseline 500 (0.50 core) |');
});

test('a busy machine is named in the row', () => {
  const result = scenario(
    [1, 2, 3].flatMap((round) => [
      window('service', round, [900, 560], { otherCores: 1.4 }),
      window('baseline', round, [1000, 500]),
    ]),
  );
  expect(rowOf(runOf(result))).toContain('machine busy: other processes used 1.40 cores meanwhile');
});

test('a target is met or not only from a stable row whose readings agree on a quiet machine; otherwise it is undecided, with why', () => {
  const rows = (cpu: number, otherCores: number) =>
    runOf(
      scenario(
        [1, 2, 3].flatMap((round) => [
          window('service', round, [950, cpu], { otherCores }),
          window('baseline', round, [1000, 500]),
        ]),
      ),
    );
  expect(targets(rows(520, 0.02))[0]).toBe('- met: D get by id >= 0.85x baseline at 100000: 0.95x (CPU 0.96x)');
  expect(targets(rows(520, 1.3))[0]).toBe(
    '- undecided (machine busy (1.30 other cores)): D get by id >= 0.85x baseline at 100000: 0.95x (CPU 0.96x)',
  );
  expect(targets(rows(800, 0.02))[0]).toBe(
    '- undecided (throughput and CPU ratios disagree): D get by id >= 0.85x baseline at 100000: 0.95x (CPU 0.63x)',
  );
  const slow = runOf(
    scenario(
      [1, 2, 3].flatMap((round) => [window('service', round, [800, 620]), window('baseline', round, [1000, 500])]),
    ),
  );
  expect(targets(slow)[0]).toBe('- NOT met: D get by id >= 0.85x baseline at 100000: 0.80x (CPU 0.81x)');
});

test("K: our Kong against Kong's key-auth + acl + request-transformer and against Kong's plugins doing our job, round by round, from the Kong processes' own CPU (the service's left out)", () => {
  const kong = (target: Target, round: number, reqPerSec: number, kongCpu: number) =>
    window(target, round, [reqPerSec, kongCpu + 500], {
      cpuPerRequest: { [target]: kongCpu, service: 500, generator: 12 },
    });
  const k: ScenarioResult = {
    ...scenario(
      [1, 2, 3].flatMap((round) => [
        kong('kong-key-auth', round, 1000, 200),
        kong('kong-bundled', round, 500, 1000),
        kong('kong-ours', round, 900 - round * 100, 300 + round * 50),
        window('service', round, [2000, 500]),
      ]),
    ),
    key: 'K',
    comparison: { subjects: ['kong-bare', 'kong-key-auth', 'kong-bundled', 'kong-ours'], reference: 'service' },
  };
  const lines = targets(runOf(k));
  // CPU 350/200, 400/200, 450/200; throughput 0.8, 0.7, 0.6: the medians.
  const at = "Kong's key-auth + acl + request-transformer's at 100000";
  expect(lines).toContain(`- NOT met: K our Kong's CPU per request (worker + Redis) <= 1.25x ${at}: 2.00x`);
  expect(lines).toContain(`- NOT met: K our Kong's throughput >= 0.9x ${at}: 0.70x`);
  // 400/1000; against Kong's own plugins only the CPU has a bar.
  const peer = "Kong's key-auth + acl + rate-limiting (Redis) + prometheus's at 100000";
  expect(lines).toContain(`- met: K our Kong's CPU per request (worker + Redis) <= 0.5x ${peer}: 0.40x`);
  expect(lines.filter((line) => line.includes(peer))).toHaveLength(1);
});

describe('the full sync (S): judged across the partner link when one was measured', () => {
  const sync = (seconds: number, bytes: number) => ({
    jobs: 1000,
    pages: 2,
    bytes,
    decodedBytes: 1000,
    seconds,
    contentEncoding: bytes < 1000 ? 'gzip' : 'identity',
  });
  const syncs = (loopback: [number, number], link?: [number, number]): RunResult['syncs'] => [
    { size: 100_000, target: 'kong-ours', gzip: false, runs: [sync(loopback[0], 1000)] },
    { size: 100_000, target: 'kong-ours', gzip: true, runs: [sync(loopback[1], 100)] },
    ...(link
      ? [
          { size: 100_000, target: 'kong-ours' as const, gzip: false, link: '100mbit', runs: [sync(link[0], 1000)] },
          { size: 100_000, target: 'kong-ours' as const, gzip: true, link: '100mbit', runs: [sync(link[1], 100)] },
        ]
      : []),
  ];
  const runWith = (s: RunResult['syncs']) => ({
    ...runOf(scenario([window('service', 1, [950, 520]), window('baseline', 1, [1000, 500])])),
    syncs: s,
  });
  const line = (run: RunResult) => targets(run).find((t) => t.includes('S full sync'));

  test('across the link: met when gzip takes no more time there, with the loopback figure beside it', () => {
    expect(line(runWith(syncs([4, 4.5], [10, 4])))).toBe(
      '- met: S full sync through real Kong (our configuration) with gzip moves <= 15% of the bytes in no more time across a 100mbit link, at 100000: 10.0%, 0.40x the time (on loopback 10.0%, 1.13x the time)',
    );
    expect(line(runWith(syncs([4, 3.8], [10, 11])))).toMatch(
      /^- NOT met: .* across a 100mbit link, at 100000: 10\.0%, 1\.10x the time \(on loopback 10\.0%, 0\.95x the time\)$/,
    );
  });

  test('without a link, loopback decides, and the line says no link was measured', () => {
    expect(line(runWith(syncs([4, 4.5])))).toBe(
      '- NOT met: S full sync through real Kong (our configuration) with gzip moves <= 15% of the bytes in no more time, at 100000: on loopback 10.0%, 1.13x the time (no link measured)',
    );
  });

  test('each table row says where it was measured and is compared with the plain pass of the same place', () => {
    const rows = markdownTable(runWith(syncs([4, 4.5], [10, 4])))
      .split('\n')
      .filter((l) => l.startsWith('| Kong'));
    expect(rows).toHaveLength(4);
    expect(rows[1]).toMatch(/^\| Kong, ours \(Redis\), loopback, Accept-Encoding: gzip \|.*\| 10\.0% \| 1\.13x \|$/);
    expect(rows[3]).toMatch(
      /^\| Kong, ours \(Redis\), across a 100mbit link, Accept-Encoding: gzip \|.*\| 10\.0% \| 0\.40x \|$/,
    );
  });
});

describe('the command line', () => {
  test('defaults: at least 3 and at most 10 rounds, 5% spread, one wrk thread, every scenario', () => {
    const options = parseOptions([], {});
    expect(options).toMatchObject({
      rounds: 3,
      maxRounds: 10,
      spread: 5,
      threads: 1,

      sizes: [10_000, 100_000],
    });
    expect(options.scenarios).toEqual(['A', 'B', 'C', 'D', 'E', 'G', 'H', 'K', 'M', 'S', 'W']);
  });

  test('the round limit is never below the minimum', () => {
    expect(parseOptions(['--rounds', '6', '--max-rounds', '4'], {})).toMatchObject({
      rounds: 6,
      maxRounds: 6,
    });
  });

  test('S also syncs across a 100 Mbit/s link unless told another rate or none', () => {
    expect(parseOptions([], {}).linkRate).toBe('100mbit');
    expect(parseOptions(['--link-rate', '1Gbit'], {}).linkRate).toBe('1gbit');
    expect(parseOptions(['--link-rate', 'none'], {}).linkRate).toBe('');
    expect(() => parseOptions(['--link-rate', 'fast'], {})).toThrow(
      '--link-rate takes a rate as tc writes it (1gbit, 100mbit) or none (got "fast")',
    );
  });

  test('wrong arguments are one line naming the argument', () => {
    expect(() => parseOptions(['--scenarios', 'D,X'], {})).toThrow(
      '--scenarios takes a comma list of A, B, C, D, E, G, H, K, M, S, W (got X)',
    );
    expect(() => parseOptions(['--spread', '0'], {})).toThrow('--spread takes a whole number >= 1 (got "0")');
    expect(() => parseOptions(['--webhook-seconds', '0'], {})).toThrow(
      '--webhook-seconds takes a whole number >= 1 (got "0")',
    );
    expect(() => parseOptions(['--readme'], {})).toThrow(/Unknown option '--readme'.*Usage: npm run bench/);
  });
});

test("M, measured against no reference, is the service's own row: its p50 and CPU, no reference columns", () => {
  const m: ScenarioResult = {
    ...scenario([1, 2, 3].map((round) => window('service', round, [500, 2000]))),
    key: 'M',
    title: 'mirror check',
    comparison: { subjects: ['service'], reference: 'service' },
  };
  const row = markdownTable(runOf(m))
    .split('\n')
    .find((line) => line.startsWith('| M '))!;
  const cells = row.split('|').map((cell) => cell.trim());
  expect(cells[1]).toBe('M mirror check: service vs service');
  expect([cells[4], cells[5]]).toEqual(['–', '–']);
  expect(cells[8]).toMatch(/^service \d+ .* ; –$/);
});

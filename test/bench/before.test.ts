/**
 * npm run bench --before <dir> (bench/run.ts, bench/servers.ts): the option, the "service vs before" twins of the
 * data-layer scenarios, and how the report shows them. Nothing here is timed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkoutLine, describeCheckout } from '../../bench/options';
import type { Measurement } from '../../bench/measure';
import { parseOptions } from '../../bench/options';
import { markdownReport, markdownTable, targets, type ScenarioResult } from '../../bench/report';
import {
  headersForTarget,
  withBefore,
  type Comparison,
  type Scenario,
  type ScenarioKey,
  type Target,
} from '../../bench/scenarios';
import { benchRun, benchWindow } from '../helpers/bench-run';

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'bench-before-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const built = (root: string) => {
  mkdirSync(path.join(root, 'dist/service'), { recursive: true });
  writeFileSync(path.join(root, 'dist/service/server.js'), '');
  return root;
};

describe('the --before option', () => {
  test('absent, no before; given a built checkout, its absolute path', () => {
    expect(parseOptions([], {}).before).toBe('');
    const checkout = built(path.join(dir, 'checkout'));
    expect(parseOptions(['--before', path.relative(process.cwd(), checkout)], {}).before).toBe(checkout);
  });

  test('a checkout without its build is refused in one line, before anything is seeded', () => {
    expect(() => parseOptions(['--before', dir], {})).toThrow(
      `--before takes a checkout built with npx tsc -b tsconfig.build.json (no dist/service/server.js in "${dir}")`,
    );
    expect(() => parseOptions(['--before', ''], {})).toThrow(/^--before takes a checkout built/);
  });

  test('a run of no data-layer scenario has nothing to compare with it', () => {
    expect(() => parseOptions(['--before', built(dir), '--scenarios', 'C,S'], {})).toThrow(
      '--before compares D, E, A, B, G, H: --scenarios names none of them',
    );
    expect(parseOptions(['--before', built(dir), '--scenarios', 'C,E'], {}).scenarios).toEqual(['C', 'E']);
  });
});

describe('the scenarios measured against the before service', () => {
  const direct: Comparison = { subjects: ['service'], reference: 'baseline' };
  const of = (key: ScenarioKey, extra: Partial<Scenario> = {}): Scenario => ({
    key,
    title: key,
    method: 'GET',
    path: `/api/v1/jobs?${key}`,
    as: 'reader',
    comparison: direct,
    ...extra,
  });

  test('D, E, A, B, G and H each get a twin right after them, service against before, asking the same; the others do not', () => {
    const scenarios = [
      of('A'),
      of('C'),
      of('D', { ids: ['x', 'y'] }),
      of('E', { method: 'POST', body: '{}', as: 'writer' }),
      of('K', { comparison: { subjects: ['kong-bare', 'kong-key-auth', 'kong-ours'], reference: 'service' } }),
      of('H'),
    ];
    const twins = withBefore(scenarios);
    expect(twins.map((s) => `${s.key} ${s.comparison.subjects.join('+')} vs ${s.comparison.reference}`)).toEqual([
      'A service vs baseline',
      'A service vs before',
      'C service vs baseline',
      'D service vs baseline',
      'D service vs before',
      'E service vs baseline',
      'E service vs before',
      'K kong-bare+kong-key-auth+kong-ours vs service',
      'H service vs baseline',
      'H service vs before',
    ]);
    expect(twins[4]).toMatchObject({ path: scenarios[2]!.path, ids: ['x', 'y'] });
    expect(twins[6]).toMatchObject({ method: 'POST', body: '{}', as: 'writer' });
  });

  test('the before service is called directly, with the identity headers the service gets', () => {
    const create = { as: 'writer', method: 'POST' } as const;
    expect(headersForTarget(create, 'before', 'secret')).toEqual(headersForTarget(create, 'service', 'secret'));
  });
});

const window = (target: Target, round: number, [reqPerSec, cpu]: [number, number]): Measurement =>
  benchWindow(target, round, [reqPerSec, cpu], {
    together: true,
    cpuPerRequest: { [target]: cpu, generator: 12, database: 90 },
    cores: { [target]: 0.5 },
  });

const result = (
  [key, title]: [ScenarioKey, string],
  reference: Target,
  measurements: Measurement[],
  unavailable?: string,
): ScenarioResult => ({
  size: 10_000,
  key,
  title,
  path: '/api/v1/jobs',
  comparison: { subjects: ['service'], reference },
  measurements,
  rounds: 3,
  ...(unavailable ? { unavailable } : {}),
});
const rounds = (reference: Target, service: [number, number], other: [number, number]) =>
  [1, 2, 3].flatMap((round) => [window('service', round, service), window(reference, round, other)]);

describe('the report with --before', () => {
  // The before twin comes first here: the baseline targets must still read the baseline rows.
  const run = (createCpu: number) =>
    benchRun(10_000, {
      scenarios: [
        result(['D', 'get by id (random)'], 'before', rounds('before', [1100, 450], [1000, 500])),
        result(['D', 'get by id (random)'], 'baseline', rounds('baseline', [950, 520], [1000, 500])),
        result(['E', 'create'], 'baseline', rounds('baseline', [900, 260], [1000, 240])),
        result(
          ['E', 'create'],
          'before',
          rounds('before', [Math.round((1000 * 250) / createCpu), createCpu], [1000, 250]),
        ),
        result(
          ['H', 'state=CA'],
          'before',
          [],
          'not applicable: the before service answers 400 {"error":"Unknown query parameter \\"state\\""}',
        ),
      ],
    });

  test('each data-layer scenario has a "service vs before" row beside "service vs baseline", with both sides\' CPU per request', () => {
    const rows = markdownTable(run(250))
      .split('\n')
      .filter((line) => line.startsWith('| D ') || line.startsWith('| E ') || line.startsWith('| H '));
    expect(rows.map((row) => row.split(' | ')[0])).toEqual([
      '| D get by id (random): service vs before',
      '| D get by id (random): service vs baseline',
      '| E create: service vs baseline',
      '| E create: service vs before',
      '| H state=CA vs before',
    ]);
    expect(rows[0]).toContain('| 1.10x / 1.11x |');
    expect(rows[3]).toContain('| service 250 (0.50 core) ; before 250 (0.50 core) |');
    expect(rows[4]).toBe(
      '| H state=CA vs before | n/a | | | | | | | | not applicable: the before service answers 400 {"error":"Unknown query parameter \\"state\\""} |',
    );
  });

  test('the baseline targets read the baseline rows, whichever comes first', () => {
    expect(targets(run(250))[0]).toBe('- met: D get by id >= 0.85x baseline at 10000: 0.95x (CPU 0.96x)');
    expect(targets(run(250))).toHaveLength(2);
  });

  test("the header names the before checkout's commit, and its database's copy of the jobs", () => {
    const report = markdownReport({
      ...run(250),
      before: { dir: '/work/before', commit: '1d015e3aaaabbbbccccddddeeeeffff000011112', changes: true },
      tables: [{ size: 10_000, rows: 10_000, seededSeconds: 0, before: { seededSeconds: 3 } }],
    });
    expect(report).toContain(
      'Before (--before): /work/before at 1d015e3aaaabbbbccccddddeeeeffff000011112 with uncommitted changes; its service from its own dist',
    );
    expect(report).toContain("**10,000 jobs** (10,000 rows, before's seeded in 3 s)");
  });
});

describe("the before checkout's commit", () => {
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();

  test('is HEAD there, and tracked changes on top of it are said', () => {
    git('init', '-q');
    writeFileSync(path.join(dir, 'a.txt'), 'one\n');
    git('add', 'a.txt');
    git('-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-m', 'one');
    const head = git('rev-parse', 'HEAD');
    expect(describeCheckout(dir)).toEqual({ dir, commit: head, changes: false });
    writeFileSync(path.join(dir, 'a.txt'), 'two\n');
    expect(checkoutLine(describeCheckout(dir))).toBe(`${dir} at ${head} with uncommitted changes`);
  });

  test('a directory that is not a checkout says so instead of a commit', () => {
    expect(describeCheckout(dir).commit).toMatch(/^unknown \(/);
  });
});

// The closing lines of `npm run test:mutation` (scripts/mutation-target.cjs): each file's score
// against the target, and each file under it named with its recorded reason or as missing tests.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS script with no types: the shape it exports is stated below
const { TARGET, BELOW_TARGET, targetLines } = require('../scripts/mutation-target.cjs') as {
  TARGET: number;
  BELOW_TARGET: Record<string, string>;
  targetLines(
    report: unknown,
    options?: {
      quick?: boolean;
      ignoreStatic?: boolean;
      suites?: string;
      childProcess?: boolean;
      reasons?: Record<string, string>;
    },
  ): string[];
};

const mutants = (statuses: Record<string, number>, statusReason?: string) =>
  Object.entries(statuses).flatMap(([status, n]) => Array.from({ length: n }, () => ({ status, statusReason })));

const report = (files: Record<string, Array<{ status: string; statusReason?: string }>>) => ({
  files: Object.fromEntries(Object.entries(files).map(([file, list]) => [file, { mutants: list }])),
});

test("the target is the issue's 85%", () => {
  expect(TARGET).toBe(85);
});

test('a file at the target passes; one just under it is named as missing tests', () => {
  const lines = targetLines(
    report({
      'service/b.ts': mutants({ Killed: 16, Survived: 3 }), // 84.2%
      'service/a.ts': mutants({ Killed: 16, Timeout: 1, Survived: 2, NoCoverage: 1 }), // 85.0%
    }),
  );
  expect(lines).toEqual([
    'Mutation score per file, target 85%:',
    '   85.0%  service/a.ts (17/20)',
    '   84.2%  service/b.ts (16/19)',
    'Under 85%:',
    '  service/b.ts: no reason recorded: its survivors are missing tests (scripts/mutation-target.cjs)',
  ]);
});

test('static and marked mutants are counted apart, outside the score', () => {
  const lines = targetLines(
    report({
      'service/c.ts': [
        ...mutants({ Killed: 9, Survived: 1 }),
        ...mutants({ Ignored: 4 }, 'Static mutant (and "ignoreStatic" was enabled)'),
        ...mutants({ Ignored: 2 }, 'Ignored using a comment: equivalent'),
        ...mutants({ CompileError: 5 }),
      ],
    }),
    { ignoreStatic: true, quick: true },
  );
  expect(lines[0]).toBe(
    'Mutation score per file, target 85% (static mutants left out (--ignoreStatic); process-starting suites left out (STRYKER_QUICK=1): scores are lower bounds):',
  );
  expect(lines.slice(1)).toEqual([
    '   90.0%  service/c.ts (9/10; 2 marked, 4 static)',
    'Every file scored is at or above 85%.',
  ]);
});

test('a run over chosen suites says its scores are lower bounds', () => {
  const lines = targetLines(report({ 'service/e.ts': mutants({ Killed: 1 }) }), {
    suites: 'test/faults/overload.test.ts',
  });
  expect(lines[0]).toBe(
    'Mutation score per file, target 85% (only the suites test/faults/overload.test.ts (STRYKER_TESTS): scores are lower bounds):',
  );
});

test('a run that starts the suites whole for each mutant says so', () => {
  const lines = targetLines(report({ 'service/e.ts': mutants({ Killed: 1 }) }), {
    suites: 'test/service/shutdown.test.ts',
    childProcess: true,
  });
  expect(lines[0]).toBe(
    'Mutation score per file, target 85% (only the suites test/service/shutdown.test.ts (STRYKER_TESTS): scores are lower bounds; each mutant ran those suites whole, child processes included (STRYKER_CHILD_PROCESS)):',
  );
});

test('a file with nothing to score shows n/a and is not called under the target', () => {
  const lines = targetLines(report({ 'service/d.ts': mutants({ CompileError: 2 }) }));
  expect(lines.slice(1)).toEqual(['    n/a  service/d.ts (0/0)', 'Every file scored is at or above 85%.']);
});

test('a file recorded as under the target is named with its reason, the others as missing tests', () => {
  const reasons = { 'service/slow.ts': 'only a fault no test can make reaches its survivors' };
  const lines = targetLines(
    report({
      'service/slow.ts': mutants({ Killed: 1, Survived: 1 }),
      'service/gap.ts': mutants({ Killed: 1, Survived: 1 }),
    }),
    { reasons },
  );
  expect(lines.slice(-3)).toEqual([
    'Under 85%:',
    '  service/gap.ts: no reason recorded: its survivors are missing tests (scripts/mutation-target.cjs)',
    '  service/slow.ts: only a fault no test can make reaches its survivors',
  ]);
});

test('no file is recorded as under the target today (every file scored is at 85% or above)', () => {
  expect(BELOW_TARGET).toEqual({});
});

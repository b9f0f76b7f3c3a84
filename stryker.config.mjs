// Mutation testing: `npm run test:mutation` (every file below) or
// `npm run test:mutation -- --mutate service/middleware/gateway-trust.ts` (one file; globs work too).
// Not part of npm test or CI: it reruns the related tests once per mutant. How to run it: docs/testing.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'jest',
  jest: {
    projectType: 'custom',
    configFile: 'jest.config.js',
    // Each mutant runs only the test files that import its file. Jest finds them through its
    // module map, which covers only `roots`: the sources must be in it, not just test/.
    // STRYKER_CHILD_PROCESS=1 (with STRYKER_TESTS): the named suites reach the file only through
    // the processes they start, so no import links them to it: run every one of them for each mutant.
    enableFindRelatedTests: !process.env.STRYKER_CHILD_PROCESS,
    config: {
      roots: [
        '<rootDir>/test',
        '<rootDir>/domain',
        '<rootDir>/service',
        '<rootDir>/dispatcher',
        '<rootDir>/db',
        '<rootDir>/gateway/local',
        '<rootDir>/scripts',
      ],
      // STRYKER_QUICK=1: leave out the suites that start processes or wait on clocks (e2e, faults,
      // startup, logging, replicas, ...). A mutant only they would kill then counts as survived,
      // so quick scores are a lower bound.
      ...(process.env.STRYKER_QUICK
        ? {
            testPathIgnorePatterns: [
              '/node_modules/',
              '/test/e2e/',
              '/test/faults/',
              '/test/startup',
              '/test/logging',
              '/test/replicas',
              '/test/leak',
              '/test/kong-logs',
              '/test/seed-demo-data',
              '/test/deploy-config',
              '/test/keys/',
            ],
          }
        : {}),
      // STRYKER_TESTS=<file>,<file>: only these suites. For middleware every request passes (each
      // mutant would rerun most of the suite) and for code only process-starting suites reach:
      // the file's own suites give its score in minutes instead of hours, as a lower bound.
      ...(process.env.STRYKER_TESTS
        ? { testMatch: process.env.STRYKER_TESTS.split(',').map((file) => `<rootDir>/${file.trim()}`) }
        : {}),
    },
  },
  // Each Stryker worker is its own process running jest in band; test/helpers/global-setup.ts gives
  // it its own TEST_RUN_ID, so its databases (jt_<run>_1_*) never meet another worker's or run's.
  // A child process reports no coverage, so its mutants would count as not covered (even with
  // 'all'): with STRYKER_CHILD_PROCESS=1 there is no coverage analysis and every mutant runs the
  // named suites whole; the child inherits __STRYKER_ACTIVE_MUTANT__ from the jest process.
  coverageAnalysis: process.env.STRYKER_CHILD_PROCESS ? 'off' : 'perTest',
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: [
    'domain/**/*.ts',
    'service/**/*.ts',
    'dispatcher/**/*.ts',
    'gateway/local/**/*.ts',
    'db/**/*.ts',
    // drizzle-kit's output, not code we write.
    '!db/migrations/**',
    // The demo data set: its strings and numbers are content, not behaviour.
    '!db/seed-data.ts',
  ],
  ignorePatterns: ['dist', 'reports', 'coverage'],
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  // Stryker gives half of the concurrency to TypeScript checkers, which sit mostly idle once they
  // are ahead of the tests: 4 means two jest runners on a 2-core machine (with 2 there was one),
  // and the tests spend much of their time waiting on MariaDB.
  concurrency: 4,
  // Longer than jest's own testTimeout (30 s): a mutant that hangs a request then fails its test
  // (killed) instead of being guessed a timeout. Mutants that only ran slowly on a busy machine were
  // counted as timeouts with Stryker's 5-10 s, which flattered the score.
  timeoutMS: 60000,
  // mutation-target (scripts/mutation-target.cjs): each file's score against the 85% target, and
  // the recorded reason for each file under it.
  appendPlugins: ['./scripts/mutation-target.cjs'],
  reporters: ['clear-text', 'progress', 'html', 'json', 'mutation-target'],
  clearTextReporter: { allowColor: false, reportMutants: true, reportScoreTable: true, logTests: false },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 85, low: 70, break: null },
  tempDirName: '.stryker-tmp',
};

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type errors are caught by `npm run lint`; tests only transpile (isolatedModules: each file alone), which keeps them fast.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true }, diagnostics: false }] },
  // Each run gets an id (its databases are jt_<id>_*), and drops them at the end.
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  maxWorkers: 2,
  // A file that waits out minutes of clock starts first on a fresh clone (CI), not where its size puts it.
  testSequencer: '<rootDir>/test/helpers/sequencer.js',
  testTimeout: 30000,
};

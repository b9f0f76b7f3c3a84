/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type errors are caught by `npm run lint`; tests only transpile, which keeps them fast.
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }] },
  maxWorkers: 2,
  testTimeout: 30000,
};

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // Limits guard against hangs only (speed is measured in `npm run bench`): generous, so that a loaded machine
    // (several suites sharing 2 cores) does not fail a correct test.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
    // The JSON report lets .ci/run print a plain 'N passed, N failed' line.
    reporters: ['default', ['json', { outputFile: 'test-results.json' }]],
  },
});

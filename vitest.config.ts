import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // The JSON report lets .ci/run print a plain 'N passed, N failed' line.
    reporters: ['default', ['json', { outputFile: 'test-results.json' }]],
  },
});

import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The infrastructure tests the fast check (`npm run check`, vitest's `--mode check`) leaves to the full run, each
 * for its cost on 2 cores and because it guards no derivation from the declarations: they run real tools (cdk synth
 * with bundling, cfn-lint, esbuild bundles, the preflight command in a child process), simulate 10,000 canaries, or
 * synthesize the app under many contexts. Every other infrastructure test, a new one included, is in the fast check:
 * the tests that read the synthesized templates share one synth (test/infra/shared-synth.ts).
 */
const FULL_RUN_ONLY = [
  'test/infra/bundles.test.ts',
  'test/infra/cfn-lint.test.ts',
  'test/infra/cli.test.ts',
  'test/infra/deploy-lifecycle.test.ts',
  'test/infra/feature-flags.test.ts',
  'test/infra/gate-simulation.test.ts',
  'test/infra/preflight-*.test.ts',
  'test/infra/region.test.ts',
  'test/infra/stage-context.test.ts',
  'test/infra/walk-back*.test.ts',
];

export default defineConfig(({ mode }) => ({
  test: {
    // The fast check: the unit, contract and infrastructure tests (the checks that guard derivation); `npm test`
    // runs them all.
    include: mode === 'check' ? ['test/{unit,contract,infra}/**/*.test.ts'] : ['test/**/*.test.ts'],
    exclude: mode === 'check' ? [...configDefaults.exclude, ...FULL_RUN_ONLY] : configDefaults.exclude,
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
}));

import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The infrastructure tests the fast check (`npm run check`, vitest's `--mode check`) leaves to the full run, each
 * for its cost on 2 cores (46 s to 3 s of a 2-minute check, measured alone on a quiet machine) and because it guards
 * no derivation from the declarations: they run real tools (cfn-lint on every documented variant, `cdk synth` with
 * bundling, the preflight command against stand-ins for AWS), simulate 10,000 canaries or 4,000 bakes per case, inject faults, or
 * synthesize the app under other contexts. Every other infrastructure test, a new one included, is in the fast
 * check: the tests that read the synthesized templates share one synth (test/infra/shared-synth.ts).
 */
const FULL_RUN_ONLY = [
  'test/infra/cfn-lint.test.ts',
  'test/infra/cli.test.ts',
  'test/infra/feature-flags.test.ts',
  'test/infra/gate-simulation.test.ts',
  'test/infra/preflight-status.test.ts',
  'test/infra/region.test.ts',
  'test/infra/stage-context.test.ts',
  'test/infra/walk-back-faults.test.ts',
  'test/unit/bake-simulation.test.ts',
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

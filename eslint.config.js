// Lint rules and the import boundaries that keep dependencies pointing one way (README, Layout).
// ESLint + Prettier rather than Biome: Biome's per-platform binaries are not all on the registry this project
// installs from, so its lock file fails `npm ci`; these are plain JavaScript.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** An import boundary: files matching `files` may not import what `group` matches. */
const boundary = (files, group, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group, message }] }] },
});

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'cdk.out/**',
      'client/schema.d.ts',
      'site/**',
      'bench/results/**',
      'coverage/**',
      'dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Tests and adapters read untyped JSON (templates, EMF lines, DynamoDB items) on purpose.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  boundary(
    ['lambdas/**'],
    ['**/lib/**', '**/bench/**', '**/test/**', 'aws-cdk-lib', 'aws-cdk-lib/*', 'constructs', 'cdk-nag'],
    'Function code never imports the CDK side (lib/): data both sides share lives in contract/.',
  ),
  boundary(
    ['lambdas/domain/**'],
    ['**/lib/**', '**/bench/**', '**/test/**', '**/storage/**', '**/shared/**', '@aws-sdk/*'],
    'The domain imports neither storage nor configuration: take them (and the clock) as parameters.',
  ),
  boundary(
    ['contract/**'],
    [
      '**/lib/**',
      '**/lambdas/**',
      '**/bin/**',
      '**/bench/**',
      '**/test/**',
      'aws-cdk-lib',
      'aws-cdk-lib/*',
      '@aws-sdk/*',
    ],
    'contract/ is plain data both sides share: it imports neither side.',
  ),
  boundary(
    ['lib/**', 'bin/**'],
    ['**/bench/**', '**/test/**'],
    'What ships never imports what only checks: models and test helpers live in bench/ and test/.',
  ),
  boundary(
    ['lambdas/storage/**'],
    [
      '**/lib/**',
      '**/bench/**',
      '**/test/**',
      '**/handlers/**',
      '**/shared/**',
      '**/domain/limiter.ts',
      '**/domain/refusal.ts',
    ],
    'Storage adapters implement the domain ports: they store, and never reach up to the envelope, handlers, the limiter, the refusals or the CDK side.',
  ),
  // Configuration and time come from the composition root: only what every Lambda entry runs (and the runtime's
  // defaults) reads the environment or the wall clock; observability stamps its lines with wall time and the trace id.
  {
    files: ['lambdas/**'],
    ignores: ['lambdas/shared/lambda-entry.ts', 'lambdas/shared/runtime.ts', 'lambdas/shared/observability.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Take configuration from the Runtime (shared/runtime.ts).' },
        { object: 'Date', property: 'now', message: 'Take the clock from the Runtime (runtime.now).' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'Take the clock from the Runtime (runtime.now).',
        },
      ],
    },
  },
);

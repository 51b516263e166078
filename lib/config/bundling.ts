/**
 * The one esbuild configuration for every Lambda: the CDK stack (NodejsFunction bundling) and the benchmarks
 * (bundle sizes, cold starts) both read it. Plain data, no CDK imports.
 */
export const BUNDLING = {
  /** Node.js 24 on arm64 in Lambda. */
  target: 'node24',
  platform: 'node',
  format: 'esm',
  minify: true,
  sourceMap: true,
  /** Prefer ES modules so esbuild can tree-shake the AWS SDK, which is bundled (not taken from the runtime). */
  mainFields: ['module', 'main'],
  /** Bundle everything, the AWS SDK included: a pinned, tree-shaken SDK starts faster than the runtime's copy. */
  externalModules: [] as string[],
  /** ESM bundles still meet CommonJS dependencies that call require(). */
  banner: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
  /**
   * Imports resolved to another module, paths relative to the project root: zod's API, as far as the schemas use it,
   * on a small engine of our own (lambdas/shared/zod-lite.ts, checked against zod by test/unit/zod-lite.test.ts),
   * which keeps ~30 KB and zod's set-up out of every function (docs/performance.md). The schemas stay as declared.
   */
  alias: {
    'zod/mini': './lambdas/shared/zod-lite.ts',
    'zod/locales': './lambdas/shared/zod-lite-messages.ts',
  },
} as const;

/**
 * How every Lambda runs beyond its code: its memory and the Node options the stack sets. The CDK stack
 * (lib/constructs/api-function.ts) deploys them; the benchmarks run each bundle, and its floor, as Lambda's Node.js
 * runtime would with them. Plain data, no CDK imports.
 */
export const FUNCTION_RUNTIME = {
  memoryMb: 512,
  /** Source-mapped stack traces in the logs (the bundles carry their maps). */
  nodeOptions: '--enable-source-maps',
} as const;

/**
 * The V8 heap limits Lambda's Node.js bootstrap passes for a function's memory (the `/var/runtime/bootstrap` script
 * of AWS's Node.js base images: a tenth of the memory for the young generation, split into its two semi-spaces, the
 * rest for the old). They change how a warm container collects (in the bench, a fraction of the pause time per call
 * at V8's defaults), so a bench that runs a bundle without them measures pauses the deployed function does not have.
 */
export function lambdaHeapFlags(memoryMb: number): string {
  const newSpace = Math.floor(memoryMb / 10);
  return `--max-semi-space-size=${Math.floor(newSpace / 2)} --max-old-space-size=${memoryMb - newSpace}`;
}

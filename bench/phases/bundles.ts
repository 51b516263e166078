/**
 * Phase 1: bundle sizes of every lambda against the floor bundle (the libraries every function is built on:
 * bench/floor-handler.ts), and what each library costs in bytes (library-prices.ts prices them in init ms).
 */
import { join } from 'node:path';
import { LAMBDA_FUNCTIONS, handlerModule, writeLambdaEntry } from '../../lib/config/lambda-entries.ts';
import { ROOT, bundle, lambdaName, weightByPackage, weightOverFloor, type BundleResult } from '../lib/bundle.ts';
import { printTable, ratio, round } from '../lib/util.ts';
import type { BenchContext } from './context.ts';

const RESULTS = join(ROOT, 'bench/results');
const FLOOR_ENTRY = 'bench/floor-handler.ts';
/**
 * Minified bytes as a ratio to the floor's, for every Lambda, the authorizer included: a bloat guard, not a target
 * to shave (the floor already carries the libraries; what is beyond it is our code and a function's own clients).
 */
const BUNDLE_GOAL = 1.2;

export type Bundles = { bundles: BundleResult[]; floorBundle: BundleResult };

/** Builds, measures and reports the bundles; the cold-start phase runs the returned bundles. */
export async function runBundles({ result, target }: BenchContext): Promise<Bundles> {
  const bundleDir = join(RESULTS, 'bundles');
  const floorBundle = await bundle('floor-handler', FLOOR_ENTRY, bundleDir);
  // Each function's entry as the stack generates it, bundled under its handler's file name.
  const bundles = await Promise.all(
    LAMBDA_FUNCTIONS.map((fn) => bundle(lambdaName(handlerModule(fn.name)), writeLambdaEntry(fn), bundleDir)),
  );
  const rows = bundles.map((b) => ({
    lambda: b.name,
    minBytes: b.minBytes,
    gzipBytes: b.gzipBytes,
    minRatio: round(ratio(b.minBytes, floorBundle.minBytes), 3),
    gzipRatio: round(ratio(b.gzipBytes, floorBundle.gzipBytes), 3),
    top: weightByPackage(b.metafile).slice(0, 6),
    overFloor: weightOverFloor(b.metafile, floorBundle.metafile),
  }));
  result.bundles = { floor: { minBytes: floorBundle.minBytes, gzipBytes: floorBundle.gzipBytes }, lambdas: rows };
  printTable(
    '1. Bundles (shared esbuild config; floor = DocumentClient, zod/mini, @middy/core + http-json-body-parser, Powertools Logger + Metrics)',
    ['lambda', 'min KB', 'gzip KB', 'min x floor', 'gzip x floor', 'largest package'],
    [
      ['floor', floorBundle.minBytes / 1024, floorBundle.gzipBytes / 1024, 1, 1, ''],
      ...rows.map((r) => [
        r.lambda,
        r.minBytes / 1024,
        r.gzipBytes / 1024,
        r.minRatio,
        r.gzipRatio,
        `${r.top[0]!.pkg} ${(r.top[0]!.bytes / 1024).toFixed(0)} KB`,
      ]),
    ],
  );
  console.log('\nBytes over the floor, by package (esbuild metafile; "(app)" is our code):');
  for (const r of rows)
    console.log(
      `  ${r.lambda.padEnd(12)} +${((r.minBytes - floorBundle.minBytes) / 1024).toFixed(1)} KB: ${r.overFloor
        .slice(0, 8)
        .map((w) => `${w.pkg} ${(w.bytes / 1024).toFixed(1)}`)
        .join(', ')}`,
    );
  // Bytes are exact: no spread.
  for (const r of rows)
    target(`bundle <= ${BUNDLE_GOAL}x floor`, r.lambda, r.minRatio, `<= ${BUNDLE_GOAL}`, r.minRatio <= BUNDLE_GOAL);
  return { bundles, floorBundle };
}

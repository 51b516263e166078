/**
 * Bundles a Lambda entry with exactly the shared esbuild settings the CDK stack uses (lib/config/bundling.ts),
 * through the esbuild JS API, and measures the result.
 */
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { BUNDLING } from '../../lib/config/bundling.ts';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface BundleResult {
  readonly name: string;
  readonly entry: string;
  readonly outfile: string;
  /** Bytes of the minified bundle (the .mjs; its source map not counted). */
  readonly minBytes: number;
  /** Bytes of the bundle gzipped (level 9). */
  readonly gzipBytes: number;
  readonly metafile: Metafile;
}

/** The esbuild options NodejsFunction derives from the shared BUNDLING config. */
export function esbuildOptions(bundling: typeof BUNDLING = BUNDLING): BuildOptions {
  return {
    bundle: true,
    target: bundling.target,
    platform: bundling.platform,
    format: bundling.format,
    minify: bundling.minify,
    sourcemap: bundling.sourceMap,
    sourcesContent: bundling.sourcesContent,
    mainFields: [...bundling.mainFields],
    external: [...bundling.externalModules],
    banner: { js: bundling.banner },
    logLevel: 'silent',
  };
}

/** Bundles `entry` (relative to the repo root, or absolute) into `outDir/<name>.mjs`. */
export async function bundle(
  name: string,
  entry: string,
  outDir: string,
  overrides: BuildOptions = {},
): Promise<BundleResult> {
  mkdirSync(outDir, { recursive: true });
  const outfile = join(outDir, `${name}.mjs`);
  const r = await build({
    ...esbuildOptions(),
    ...overrides,
    entryPoints: [resolve(ROOT, entry)],
    outfile,
    metafile: true,
    absWorkingDir: ROOT,
  });
  const code = readFileSync(outfile);
  return {
    name,
    entry,
    outfile,
    minBytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    metafile: r.metafile!,
  };
}

/** Bytes of the output attributed to each package (or to first-party code), largest first. */
export function weightByPackage(meta: Metafile): Array<{ pkg: string; bytes: number }> {
  const out = Object.values(meta.outputs).find((o) => o.entryPoint);
  const by = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(out?.inputs ?? {})) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const pkg = m ? m[1]! : `(app) ${path.split('/').slice(0, 2).join('/')}`;
    by.set(pkg, (by.get(pkg) ?? 0) + bytesInOutput);
  }
  return [...by].map(([pkg, bytes]) => ({ pkg, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/**
 * Where a bundle's bytes beyond the floor's go: each package's (or first-party folder's) bytes in this bundle less
 * its bytes in the floor's, largest first; packages the floor carries as much of drop out.
 */
export function weightOverFloor(meta: Metafile, floorMeta: Metafile): Array<{ pkg: string; bytes: number }> {
  const floor = new Map(weightByPackage(floorMeta).map((w) => [w.pkg, w.bytes]));
  return weightByPackage(meta)
    .map(({ pkg, bytes }) => ({ pkg, bytes: bytes - (floor.get(pkg) ?? 0) }))
    .filter((w) => w.bytes > 256)
    .sort((a, b) => b.bytes - a.bytes);
}

export const lambdaName = (entry: string) => basename(entry).replace(/\.ts$/, '');

/**
 * A cache keyed on the contents of the files something is built from: the local synth (lib/local/synth.ts) and the
 * infra tests' shared synth (test/infra/shared-synth.ts) both rebuild only when a source changed, and keep a few
 * builds of other branches beside the newest.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's root folder. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What every synth of the app is built from, besides the lib/ folders it runs. */
export const APP_SOURCES = ['contract', 'lambdas', 'package-lock.json', 'cdk.json'] as const;

/** The cache `node_modules/.cache/<name>` (created), and a fresh temporary folder name in it for a build. */
export function cacheFolders(name: string): { readonly cache: string; readonly tmp: string } {
  const cache = join(PROJECT_ROOT, 'node_modules', '.cache', name);
  mkdirSync(cache, { recursive: true });
  return { cache, tmp: join(cache, `tmp-${process.pid}-${randomBytes(4).toString('hex')}`) };
}

/** Every file under `path` (itself if a file), sorted: the same order on every machine. */
function filesUnder(root: string, path: string): string[] {
  const abs = join(root, path);
  if (!existsSync(abs)) return [];
  if (!statSync(abs).isDirectory()) return [abs];
  return readdirSync(abs, { recursive: true, encoding: 'utf8' })
    .map((f) => join(abs, f))
    .filter((f) => statSync(f).isFile())
    .sort();
}

/** A hash of `extra` and of every input file's path and contents: 20 hex digits, the cache key. */
export function contentHash(root: string, inputs: readonly string[], extra: string): string {
  const h = createHash('sha256').update(extra);
  for (const f of inputs.flatMap((p) => filesUnder(root, p))) h.update(relative(root, f)).update(readFileSync(f));
  return h.digest('hex').slice(0, 20);
}

/** Deletes all but the `keep` newest entries of `cache` whose names match `entry`. */
export function pruneCache(cache: string, entry: RegExp, keep: number): void {
  const dirs = readdirSync(cache)
    .filter((d) => entry.test(d))
    .map((d) => ({ d, t: statSync(join(cache, d)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { d } of dirs.slice(keep)) rmSync(join(cache, d), { recursive: true, force: true });
}

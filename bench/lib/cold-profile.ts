/**
 * `npm run bench -- --only=cold --cold-prof`: where a cold start's CPU goes, by package or folder of ours. The probe
 * (bench/cold-start.ts) runs under V8's sampling profiler (`--cpu-prof`), on a function's bundle and on its floor's;
 * each sample's frame is mapped back to its source through the bundle's source map (node:module's SourceMap, as
 * `--enable-source-maps` does for stacks), and self time is summed per package (or first-party folder), init and
 * first invoke together, averaged over the samples.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CpuProfile } from './profile.ts';
import { runChild } from './util.ts';

type Frame = CpuProfile['nodes'][number]['callFrame'] & { columnNumber?: number };

type Side = { readonly bundle: string; readonly env: NodeJS.ProcessEnv };

/**
 * Self CPU ms per package over `rounds` cold starts of each side's bundle (node `--cpu-prof`), mapped through its
 * source map; the two sides alternate, so a change in the machine's load falls on both.
 */
export async function coldProfile(
  probe: string,
  event: string,
  sides: { readonly ours: Side; readonly floor: Side },
  rounds: number,
): Promise<{ ours: Map<string, number>; floor: Map<string, number> }> {
  const dirs = {
    ours: mkdtempSync(join(tmpdir(), 'bench-cold-prof-')),
    floor: mkdtempSync(join(tmpdir(), 'bench-cold-prof-')),
  };
  const run = (s: 'ours' | 'floor') =>
    runChild(
      ['--cpu-prof', '--cpu-prof-interval', '100', `--cpu-prof-dir=${dirs[s]}`, probe, sides[s].bundle, event],
      sides[s].env,
    );
  try {
    for (let i = 0; i < rounds; i++) {
      if (i % 2) await run('floor').then(() => run('ours'));
      else await run('ours').then(() => run('floor'));
    }
    return {
      ours: bySource(dirs.ours, sides.ours.bundle, rounds),
      floor: bySource(dirs.floor, sides.floor.bundle, rounds),
    };
  } finally {
    for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
  }
}

function bySource(dir: string, bundle: string, rounds: number): Map<string, number> {
  const map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as never);
  const bundleUrl = `file://${bundle}`;
  const by = new Map<string, number>();
  for (const f of readdirSync(dir)) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as CpuProfile;
    const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame as Frame]));
    p.samples.forEach((id, i) => {
      const cf = frames.get(id)!;
      if (cf.functionName === '(idle)') return;
      const key = packageOf(cf, bundleUrl, map);
      by.set(key, (by.get(key) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000 / rounds);
    });
  }
  return by;
}

function packageOf(cf: Frame, bundleUrl: string, map: SourceMap): string {
  if (cf.url !== bundleUrl)
    return cf.url
      ? cf.url.startsWith('node:')
        ? 'node (built-in modules)'
        : 'the probe'
      : `(${cf.functionName || 'native'})`;
  const src = map.findEntry(cf.lineNumber, cf.columnNumber ?? 0) as { originalSource?: string };
  const path = src.originalSource ?? '';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
  if (pkg) return pkg;
  const own = path.replace(/^(\.\.\/)+/, '');
  return own
    ? own
        .split('/')
        .slice(0, own.startsWith('contract') ? 1 : 2)
        .join('/')
    : '(bundle, unmapped)';
}

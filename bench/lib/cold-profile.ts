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

/** Self CPU ms per package over `rounds` cold starts of `bundle` (node `--cpu-prof`), mapped through its source map. */
export async function coldProfile(
  probe: string,
  bundle: string,
  event: string,
  env: NodeJS.ProcessEnv,
  rounds: number,
): Promise<Map<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cold-prof-'));
  try {
    for (let i = 0; i < rounds; i++)
      await runChild(['--cpu-prof', '--cpu-prof-interval', '100', `--cpu-prof-dir=${dir}`, probe, bundle, event], env);
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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

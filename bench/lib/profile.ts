/**
 * Reading V8 CPU profiles (.cpuprofile) of the warm-path servers: where each server's CPU time per call goes, by
 * package or folder of ours (self time, idle excluded), and which of our functions take the most.
 */
import { ROOT } from './bundle.ts';

export interface CpuProfile {
  readonly nodes: ReadonlyArray<{
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }>;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Where a frame's code lives: an npm package, a folder of ours, a part of Node, or native code. */
export function moduleOf(url: string, functionName: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  if (url.startsWith('node:')) return url.startsWith('node:_http') ? 'node:http' : `node:${url.slice(5).split('/')[0]}`;
  if (!url) return `(${functionName || 'native'})`;
  const own = decodeURIComponent(url)
    .replace(/^file:\/\//, '')
    .replace(`${ROOT}/`, '');
  return own
    .split('/')
    .slice(0, own.startsWith('contract') ? 1 : 2)
    .join('/');
}

const isOurs = (url: string) => /\/(lambdas|lib|contract)\//.test(url) && !url.includes('node_modules');

/** Self time (microseconds) by module, and by function for our own code, idle time left out. */
export function selfTime(p: CpuProfile): { modules: Map<string, number>; ours: Map<string, number> } {
  const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const modules = new Map<string, number>();
  const ours = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const cf = frames.get(id)!;
    const t = p.timeDeltas[i] ?? 0;
    // Idle time, and the in-process profiler's own work (node:inspector), are not the server's.
    if (cf.functionName === '(idle)' || cf.url === 'node:inspector') return;
    const m = moduleOf(cf.url, cf.functionName);
    modules.set(m, (modules.get(m) ?? 0) + t);
    if (isOurs(cf.url)) {
      const k = `${cf.functionName || '(anonymous)'} ${moduleOf(cf.url, '')}/${cf.url.split('/').pop()}:${cf.lineNumber + 1}`;
      ours.set(k, (ours.get(k) ?? 0) + t);
    }
  });
  return { modules, ours };
}

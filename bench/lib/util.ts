/** Small helpers: statistics, child processes, table printing, autocannon. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';

export function median(xs: readonly number[]): number {
  const s = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const ratio = (a: number, b: number) => (b ? a / b : NaN);
export const round = (x: number, d = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);

/** Prints an aligned text table (first column left-aligned, the rest right-aligned). */
export function printTable(title: string, header: string[], rows: Array<Array<string | number>>): void {
  const cells = [header, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  const line = (r: Array<string | number>) =>
    r.map((c, i) => (i ? String(c).padStart(widths[i]!) : String(c).padEnd(widths[i]!))).join('  ');
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) console.log(line(r));
}

function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return String(x);
  return Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** Starts a node child that prints one JSON line when ready; resolves with that line and the child. */
export async function startChild<T>(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ info: T; child: ChildProcess }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const rl = createInterface({ input: child.stdout! });
  const info = await new Promise<T>((resolve, reject) => {
    rl.once('line', (l) => {
      try {
        resolve(JSON.parse(l) as T);
      } catch (err) {
        reject(err as Error);
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`${args.join(' ')} exited (${code}) before it was ready:\n${stderr}`)),
    );
  });
  return { info, child };
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/** Runs a node child to completion and parses the last line of its stdout as JSON. */
export function runChild<T>(args: string[], env: NodeJS.ProcessEnv): Promise<T & { wallMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.once('exit', (code) => {
      const wallMs = performance.now() - t0;
      const last = out.trim().split('\n').pop() ?? '';
      try {
        resolve({ ...(JSON.parse(last) as T), wallMs });
      } catch {
        reject(new Error(`${args.join(' ')} exited ${code}: ${err || out}`));
      }
    });
  });
}

export interface LoadResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly total: number;
  readonly non2xx: number;
  readonly errors: number;
}

interface AutocannonOpts {
  url: string;
  connections: number;
  duration: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
}
const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (opts: AutocannonOpts) => Promise<AutocannonResult>;

/** One autocannon run (JS API). `duration` in seconds. */
export async function load(opts: AutocannonOpts): Promise<LoadResult & { ok2xx: number }> {
  const r = await autocannon(opts);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    ok2xx: r['2xx'],
  };
}

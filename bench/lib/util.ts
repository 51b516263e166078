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

/** The q-quantile (0..1) of `xs`, interpolated between the two nearest values. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const i = (s.length - 1) * q;
  const lo = Math.floor(i);
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (i - lo);
}

/**
 * Median and spread (interquartile range) of per-round figures, and the verdict on a goal: met when the whole
 * spread meets it, missed when none of it does, and 'inside the spread' when the goal lies within it: a result the
 * noise of the run cannot tell from the goal, reported as such and never as a win.
 */
export function spreadOf(xs: readonly number[], meets: (x: number) => boolean) {
  const lo = quantile(xs, 0.25);
  const hi = quantile(xs, 0.75);
  const verdict: Verdict = meets(lo) && meets(hi) ? 'yes' : !meets(lo) && !meets(hi) ? 'NO' : 'inside the spread';
  return { median: quantile(xs, 0.5), lo, hi, verdict };
}
export type Verdict = 'yes' | 'NO' | 'inside the spread';

/** A ratio's table cells: both sides' figures, the median ratio and its spread (p25-p75). */
export const ratioCells = (ours: number, floor: number, s: { median: number; lo: number; hi: number }) => [
  ours,
  floor,
  round(s.median, 3),
  `${s.lo.toFixed(2)}-${s.hi.toFixed(2)}`,
];

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
  /** The non-2xx answers by status: a count alone cannot tell a 429 from a 503. */
  readonly statuses: Readonly<Record<string, number>>;
  /** Every answer by status, 2xx included, and requests that got none (`error`: a refused connection, a timeout). */
  readonly answers: Readonly<Record<string, number>>;
  readonly errors: number;
}

export interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonOpts {
  url: string;
  connections: number;
  duration?: number;
  /** Stop after this many requests instead of after `duration`. */
  amount?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Sent in turn on each connection (e.g. one per API key), instead of method/headers/body. */
  requests?: AutocannonRequest[];
}
interface AutocannonResult {
  requests: { average: number; total: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
}
type AutocannonInstance = Promise<AutocannonResult> & {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
};
const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (opts: AutocannonOpts) => AutocannonInstance;

/**
 * One autocannon run (JS API). `duration` in seconds. Latency percentiles are taken from every 2xx response's own
 * time (sub-millisecond), not from autocannon's histogram, which keeps whole milliseconds: at 1 connection a
 * request takes a few of them, and a ratio of whole milliseconds would move in steps of 20-30 %.
 */
export async function load(opts: AutocannonOpts): Promise<LoadResult & { ok2xx: number }> {
  const instance = autocannon(opts);
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  const answers: Record<string, number> = {};
  instance.on('response', (_client, status, _bytes, ms) => {
    answers[status] = (answers[status] ?? 0) + 1;
    if (status >= 200 && status < 300) times.push(ms);
    else statuses[status] = (statuses[status] ?? 0) + 1;
  });
  const r = await instance;
  if (r.errors + r.timeouts) answers.error = r.errors + r.timeouts;
  return {
    rps: r.requests.average,
    p50: round(quantile(times, 0.5), 3),
    p99: round(quantile(times, 0.99), 3),
    total: r.requests.total,
    non2xx: r.non2xx,
    statuses,
    answers,
    errors: r.errors + r.timeouts,
    ok2xx: r['2xx'],
  };
}

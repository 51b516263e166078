/**
 * What a driver (bench/handler-driver.ts) measures of one stretch of calls, and the figures of a cell made of one or
 * more stretches of the same side. Stretches carry raw sums and every latency, so the per-handler phase can cut a
 * round into slices, alternate the two sides A B B A within it (a drift of the machine or of DynamoDB Local over the
 * round then weighs on both sides alike), and still give each side one call count, CPU time and p99 per round.
 */
export type Slice = {
  calls: number;
  wallMs: number;
  /** The process's CPU time (every thread: V8's GC helpers and libuv's pool included). */
  cpuMs: number;
  /** The main thread's alone: the steadier part of a round's figure. */
  mainMs: number;
  ddb: number;
  lines: number;
  /** Main-thread garbage collections and their pauses (ms). */
  gcCount: number;
  gcMs: number;
  latencies: number[];
  /** Every call's answer by status (`allow` for an authorizer's policy, `threw …` for an exception). */
  answers: Record<string, number>;
  unexpected: number;
  unexpectedSample?: string;
};

export type Cell = {
  calls: number;
  rps: number;
  p50: number;
  p99: number;
  cpuMsPerCall: number;
  mainMsPerCall: number;
  ddbPerCall: number;
  linesPerCall: number;
  /** Main-thread collections per 1,000 calls, and their pauses in µs per call. */
  gcPer1000: number;
  gcUsPerCall: number;
  answers: Record<string, number>;
  unexpected: number;
  unexpectedSample?: string;
};

const quantile = (sorted: Float64Array, q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;

export function cellOf(slices: readonly Slice[]): Cell {
  const sum = (f: (s: Slice) => number) => slices.reduce((a, s) => a + f(s), 0);
  const calls = sum((s) => s.calls);
  const per = Math.max(1, calls);
  const sorted = Float64Array.from(slices.flatMap((s) => s.latencies)).sort();
  const sample = slices.find((s) => s.unexpectedSample)?.unexpectedSample;
  const answers: Record<string, number> = {};
  for (const s of slices) for (const [k, n] of Object.entries(s.answers)) answers[k] = (answers[k] ?? 0) + n;
  return {
    calls,
    rps: calls / (sum((s) => s.wallMs) / 1000),
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    cpuMsPerCall: sum((s) => s.cpuMs) / per,
    mainMsPerCall: sum((s) => s.mainMs) / per,
    ddbPerCall: sum((s) => s.ddb) / per,
    linesPerCall: sum((s) => s.lines) / per,
    gcPer1000: (1000 * sum((s) => s.gcCount)) / per,
    gcUsPerCall: (1000 * sum((s) => s.gcMs)) / per,
    answers,
    unexpected: sum((s) => s.unexpected),
    ...(sample ? { unexpectedSample: sample } : {}),
  };
}

/**
 * A scale simulation of the rate limiter: many Lambda containers, each with its own limiter (its own leases and
 * caches) and its own clock error, on one set of counters, driven by a synthetic clock. Requests are processed in
 * time order, one at a time, so the outcome depends on the arrival schedule only, never on how fast this machine
 * is. With the real adapter on DynamoDB Local (`npm run bench -- --only=scale`) every counting write is metered
 * with its consumed capacity and its item; with in-memory counters (test/unit) the same scenarios run in a moment.
 *
 * Containers: like Lambda, a request goes to an idle container (one request at a time each, `serviceMs` long),
 * and a new container starts when none is idle. With `perContainer` above 1 a container serves that many at once
 * (the local server, or any runtime that overlaps requests), and with `inFlight` above 1 that many requests are
 * started before any is awaited, so their counting writes overlap in one container and across several.
 */
import { banThreshold, type PlanLimits } from '../../contract/plans.ts';
import { AppError } from '../../lambdas/domain/errors.ts';
import type { SimAnswer, SimRequest, Traffic } from './traffic.ts';
import { windowsAt, type LimitCounters, type Windows } from '../../lambdas/domain/rate-limit.ts';
import { enforce } from '../../lambdas/domain/refusal.ts';
import { createLimiter, type Limiter, type LimiterOptions } from '../../lambdas/domain/limiter.ts';

export interface SimOptions {
  readonly limits: PlanLimits;
  readonly traffic: Traffic;
  /** Wall-clock start of the run (ms since the epoch). */
  readonly startMs: number;
  /** How long one request occupies a container. @default 20 */
  readonly serviceMs?: number;
  /** Each new container's clock error is drawn from [-skewMs / 2, skewMs / 2]. @default 0 */
  readonly skewMs?: number;
  readonly subject?: string;
  /** Called before each request with the synthetic time (for meters keyed by time). */
  readonly onTime?: (atMs: number) => void;
  readonly random?: () => number;
  readonly limiterOptions?: LimiterOptions;
  /** Requests one container serves at once. @default 1 (Lambda) */
  readonly perContainer?: number;
  /** Requests started together before any of them is awaited. @default 1 */
  readonly inFlight?: number;
}

export interface WindowTally {
  admitted: number;
  rejected: number;
}

export interface SimResult {
  readonly requests: number;
  readonly admitted: number;
  readonly byStatus: Record<string, number>;
  /**
   * Admitted and rate_limited per minute window whose budget they counted against (X-RateLimit-Reset - 60): with
   * clocks apart and a full window reopened in its last moments, that is not always the true clock's minute.
   */
  readonly windows: Map<number, WindowTally>;
  readonly containers: number;
  /** Largest |X-RateLimit-Remaining - true remaining of the window| seen on an admitted request. */
  readonly maxRemainingError: number;
  /** When the first 429 and the first key_banned answer came (ms since the start), if any. */
  readonly firstRejectionMs?: number;
  readonly firstBanMs?: number;
}

interface Container {
  readonly limiter: Limiter;
  readonly skewMs: number;
  /** When each request it is serving ends, and when its latest request ends. */
  busy: number[];
  lastEnd: number;
}

/** A simple seeded generator, so runs repeat exactly. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

export async function simulate(counters: LimitCounters, o: SimOptions): Promise<SimResult> {
  const random = o.random ?? seeded(42);
  const serviceMs = o.serviceMs ?? 20;
  const subject = o.subject ?? 'sim';
  const containers: Container[] = [];
  const windows = new Map<number, WindowTally>();
  const byStatus: Record<string, number> = {};
  let requests = 0;
  let admitted = 0;
  let maxRemainingError = 0;
  let firstRejectionMs: number | undefined;
  let firstBanMs: number | undefined;
  const perContainer = o.perContainer ?? 1;
  const inFlight = o.inFlight ?? 1;
  /**
   * A container with room at `t`: the busiest one with room, the most recently freed of those (Lambda keeps warm
   * ones busy), else a new one.
   */
  const containerAt = (t: number): Container => {
    let c: Container | undefined;
    for (const k of containers) {
      k.busy = k.busy.filter((end) => end > t);
      if (k.busy.length >= perContainer) continue;
      if (!c || k.busy.length > c.busy.length || (k.busy.length === c.busy.length && k.lastEnd > c.lastEnd)) c = k;
    }
    if (!c) {
      c = {
        limiter: createLimiter(counters, { pickShard: (n) => Math.floor(random() * n), ...o.limiterOptions }),
        skewMs: ((o.skewMs ?? 0) * (random() - 0.5)) | 0,
        busy: [],
        lastEnd: 0,
      };
      containers.push(c);
    }
    c.busy.push(t + serviceMs);
    c.lastEnd = t + serviceMs;
    return c;
  };
  const tallyOf = (reset: number) => {
    const tally = windows.get(reset - 60) ?? { admitted: 0, rejected: 0 };
    windows.set(reset - 60, tally);
    return tally;
  };
  async function serve(req: SimRequest, c: Container, w: Windows): Promise<void> {
    let answer: SimAnswer;
    try {
      const h = await enforce(c.limiter, subject, o.limits, w);
      answer = { status: 200, remaining: Number(h['X-RateLimit-Remaining']), reset: Number(h['X-RateLimit-Reset']) };
      admitted++;
      const minuteBinds = h['X-RateLimit-Limit'] === String(o.limits.perMinute);
      const tally = tallyOf(minuteBinds ? answer.reset : w.minuteReset);
      tally.admitted++;
      if (minuteBinds) {
        const trueRemaining = o.limits.perMinute - tally.admitted;
        maxRemainingError = Math.max(maxRemainingError, Math.abs(answer.remaining - trueRemaining));
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      answer = {
        status: err.status as 429 | 503,
        code: err.code,
        retryAfter: Number(err.headers['Retry-After']),
        remaining: 0,
        reset: Number(err.headers['X-RateLimit-Reset']),
      };
      if (err.code === 'rate_limited') tallyOf(answer.reset).rejected++;
      if (err.status === 429) firstRejectionMs ??= req.atMs;
      if (err.code === 'key_banned') firstBanMs ??= req.atMs;
    }
    const key = answer.code ?? String(answer.status);
    byStatus[key] = (byStatus[key] ?? 0) + 1;
    o.traffic.answered?.(req, answer);
  }
  for (;;) {
    const batch: Array<Promise<void>> = [];
    for (let req = o.traffic.next(); req; req = batch.length < inFlight ? o.traffic.next() : undefined) {
      const t = o.startMs + req.atMs;
      o.onTime?.(t);
      requests++;
      const c = containerAt(t);
      batch.push(serve(req, c, windowsAt(t + c.skewMs)));
    }
    if (!batch.length) break;
    await Promise.all(batch);
  }
  return {
    requests,
    admitted,
    byStatus,
    windows,
    containers: containers.length,
    maxRemainingError,
    firstRejectionMs,
    firstBanMs,
  };
}

/** The largest share of the limit any minute window admitted (1 = exactly the limit; never above). */
export function peakWindowShare(r: SimResult, limits: PlanLimits): number {
  let max = 0;
  for (const t of r.windows.values()) max = Math.max(max, t.admitted / limits.perMinute);
  return max;
}

/** 429s (rate_limited) of the busiest window, against the ban threshold. */
export function peakWindowRejections(r: SimResult, limits: PlanLimits): { peak: number; threshold: number } {
  let peak = 0;
  for (const t of r.windows.values()) peak = Math.max(peak, t.rejected);
  return { peak, threshold: banThreshold(limits) };
}

/** What each window whose budget ran out (it refused requests) admitted, as a share of the limit: ideally 1. */
export function fullWindowShares(r: SimResult, limits: PlanLimits): number[] {
  return [...r.windows.values()].filter((t) => t.rejected > 0).map((t) => t.admitted / limits.perMinute);
}

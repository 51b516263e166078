/**
 * Rate-limit rules: fixed per-minute and per-day windows per key, the leases a container takes of them, and the ban.
 * Storage counts atomically behind the LimitCounters port declared here (lambdas/storage/limit-store.ts); the
 * container's limiter over it is limiter.ts; what a refused count answers is refusal.ts.
 *
 * Small keys count one request per write, so their counts and headers are exact. Larger keys take a lease (a block
 * of the window's budget) per write and admit from it without I/O, over several shard items: one item per key would
 * cap it at one DynamoDB partition's writes. Counting writes are sent once: a lost answer counts as used (a 503),
 * so the service may under-admit, never over-admit. docs/keys-and-limits.md gives the figures.
 */
import { LIMITER, banSecondsFor, type PlanLimits } from '../../contract/plans.ts';
import { UnavailableError } from './errors.ts';
import type { Windows } from '../../contract/windows.ts';

export { windowsAt, type Windows } from '../../contract/windows.ts';

/** One counting write's request: take up to `want` from shard `shard`'s windows (its own share of the limits). */
export interface TakeRequest {
  readonly subject: string;
  readonly shard: number;
  /** The shard's part of the key's limits. */
  readonly limits: PlanLimits;
  readonly w: Windows;
  readonly want: number;
  /**
   * Tokens of this container's earlier lease on the same shard and day that were never used: returned to the day
   * count, and to the minute count too when the write counts in the same window `giveBackWindow` they came from.
   */
  readonly giveBack: number;
  readonly giveBackWindow?: number;
}

/** What a counting write answers. Counts are the shard's, after the write. */
export type Take =
  | {
      readonly kind: 'granted';
      readonly granted: number;
      readonly minuteStart: number;
      readonly minuteCount: number;
      readonly dayCount: number;
    }
  | {
      readonly kind: 'full';
      readonly reason: 'minute' | 'day';
      readonly minuteStart: number;
      readonly minuteCount: number;
      readonly dayCount: number;
    }
  | { readonly kind: 'banned'; readonly banUntil: number };

export interface Usage {
  readonly minuteCount: number;
  readonly dayCount: number;
  readonly banUntil?: number;
  /** The key's bans today (what escalates its next ban: banSecondsFor), for the admin tool. */
  readonly bans?: number;
}

/** A granted take: how many, and the shard's counts after the write. */
export type Granted = Extract<Take, { kind: 'granted' }>;

/** A write takeStep chose: count in the open window, or open the request's own minute. */
export type CountingStep = Extract<TakeStep, { kind: 'count' | 'open' }>;

/** What one conditional write answers: granted, or the item as it is when its condition failed. */
export type Attempt =
  { readonly ok: true; readonly take: Granted } | { readonly ok: false; readonly state: ShardState };

/** The counting port: conditional writes on small items, each sent once. Storage stores; the rules here decide. */
export interface LimitCounters {
  /**
   * Applies `step` to shard `req.shard`'s day item if the item still allows it (its window, room in both windows,
   * no ban). `seen`: the item as the last failed condition returned it ({} at first).
   */
  tryTake(req: TakeRequest, step: CountingStep, seen: ShardState): Promise<Attempt>;
  /** Adds `n` 429s to the key's minute window `minuteStart`; answers the window's total. */
  addRejections(subject: string, minuteStart: number, n: number): Promise<number>;
  /**
   * Counts a ban of the key decided in minute window `minuteStart` of the day `dayStart`; answers the key's bans that
   * day, this one included. Every container that decides the same window's ban gets the same answer: it counts once.
   */
  countBan(subject: string, dayStart: number, minuteStart: number): Promise<number>;
  /** Bans the key on every shard's day items in `days` (latest first) until `banUntil` (unix seconds). */
  ban(subject: string, limits: PlanLimits, banUntil: number, days: readonly number[]): Promise<void>;
  /** The key's counts now (every shard), for the admin tool. */
  usage(subject: string, limits: PlanLimits, w: Windows): Promise<Usage>;
}

/** What the limiter answers for one request. Remaining counts are exact up to LIMITER.exactPerMinute. */
export type Consumption =
  | {
      readonly allowed: true;
      readonly minuteStart: number;
      /** The end of the day window counted in (a window reopened just before midnight counts in the next day). */
      readonly dayReset: number;
      readonly minuteRemaining: number;
      readonly dayRemaining: number;
    }
  | { readonly allowed: false; readonly reason: 'minute' | 'day'; readonly reset: number }
  | { readonly allowed: false; readonly reason: 'banned'; readonly banUntil: number };

/** An admitted call's count: what its key has left of the minute and the day, this call included. */
export type Counted = Extract<Consumption, { allowed: true }>;

/**
 * The state a stored shard item is in, and the step a counting write takes next:
 * - `count` in the open window `minuteStart` (windows only move forward: a request stamped in an older minute, after
 *   latency or clock skew, counts against the newest one, never reopens an old one);
 * - `open` the request's own minute (newer than the stored one), counting the request in it;
 * - either of them for what is left, when less than the block asked for is;
 * - `full` or `banned`.
 */
export interface ShardState {
  readonly ms?: number;
  readonly m?: number;
  readonly d?: number;
  readonly banUntil?: number;
}

export type TakeStep =
  | { readonly kind: 'count'; readonly minuteStart: number; readonly want: number }
  | { readonly kind: 'open'; readonly want: number }
  | Exclude<Take, { kind: 'granted' }>;

export function takeStep(state: ShardState, limits: PlanLimits, w: Windows, want: number): TakeStep {
  if ((state.banUntil ?? 0) > w.nowSec) return { kind: 'banned', banUntil: state.banUntil! };
  const newest = state.ms !== undefined && state.ms >= w.minuteStart;
  const minuteStart = newest ? state.ms! : w.minuteStart;
  const minuteCount = newest ? (state.m ?? 0) : 0;
  const dayCount = state.d ?? 0;
  const room = Math.min(limits.perMinute - minuteCount, limits.perDay - dayCount);
  if (room <= 0) {
    const reason = dayCount >= limits.perDay ? 'day' : 'minute';
    return { kind: 'full', reason, minuteStart, minuteCount, dayCount };
  }
  const n = Math.min(want, room);
  return newest ? { kind: 'count', minuteStart, want: n } : { kind: 'open', want: n };
}

/** Attempts before giving up on a window that keeps moving under this request (then 503, never a guess). */
const SETTLE_ATTEMPTS = 6;

/**
 * One counting write, settled: the first attempt assumes the request's own minute is open (no read first); a failed
 * condition answers the item as it is, and takeStep picks the next write from it.
 */
export async function settleTake(counters: LimitCounters, req: TakeRequest): Promise<Take> {
  let step: TakeStep = { kind: 'count', minuteStart: req.w.minuteStart, want: req.want };
  let seen: ShardState = {};
  for (let attempt = 0; attempt < SETTLE_ATTEMPTS; attempt++) {
    if (step.kind === 'banned' || step.kind === 'full') return step;
    const out = await counters.tryTake(req, step, seen);
    if (out.ok) return out.take;
    seen = out.state;
    step = takeStep(seen, req.limits, req.w, req.want);
  }
  // The windows kept moving under this request (extreme contention): unsure, so 503 + Retry-After, not 500.
  throw new UnavailableError('LimiterContention');
}

/**
 * The end of the `nth` ban of the day starting now, and the day items it is written to, latest first, so a failure
 * part-way never ends it at midnight.
 */
export function banDays(w: Windows, nth = 1): { banUntil: number; days: number[] } {
  const banUntil = w.nowSec + banSecondsFor(nth);
  const days: number[] = [];
  for (let day = w.dayStart; day < banUntil; day += 86_400) days.unshift(day);
  return { banUntil, days };
}

/**
 * How many requests one counting write takes: 1 up to LIMITER.exactPerMinute (exact); above, about
 * LIMITER.leaseSeconds of this container's own rate for the key, no more than it can use before the window ends,
 * and at most 1/LIMITER.leasesPerShardWindow of the shard's minute budget (what an idle container can strand).
 */
export function leaseSize(limits: PlanLimits, shard: PlanLimits, ratePerSecond: number, w: Windows): number {
  if (limits.perMinute <= LIMITER.exactPerMinute) return 1;
  const secondsLeft = Math.max(0, (w.minuteReset * 1000 - w.nowMs) / 1000);
  const want = Math.ceil(ratePerSecond * Math.min(LIMITER.leaseSeconds, secondsLeft));
  return Math.min(Math.max(1, want), leaseCap(shard));
}

/** The largest lease: 1/LIMITER.leasesPerShardWindow of the shard's minute budget (what an idle container strands). */
export function leaseCap(shard: PlanLimits): number {
  return Math.max(1, Math.floor(shard.perMinute / LIMITER.leasesPerShardWindow));
}

export interface RateLimitHeaders {
  'X-RateLimit-Limit': string;
  'X-RateLimit-Remaining': string;
  'X-RateLimit-Reset': string;
  'Retry-After'?: string;
}

/** An admitted request's headers: the window that binds soonest (fewer requests left; the minute on a tie). */
export function rateLimitHeaders(limits: PlanLimits, c: Extract<Consumption, { allowed: true }>): RateLimitHeaders {
  const minuteBinds = c.minuteRemaining <= c.dayRemaining;
  return {
    'X-RateLimit-Limit': String(minuteBinds ? limits.perMinute : limits.perDay),
    'X-RateLimit-Remaining': String(
      minuteBinds ? Math.min(c.minuteRemaining, limits.perMinute) : Math.min(c.dayRemaining, limits.perDay),
    ),
    'X-RateLimit-Reset': String(minuteBinds ? c.minuteStart + 60 : c.dayReset),
  };
}

/**
 * Rate-limit rules (spec section 8): fixed per-minute and per-day windows per key, the headers every response
 * carries, the 429s and the ban. The counting itself is atomic in storage (the LimitCounters port,
 * lambdas/storage/limit-store.ts); a container's leases and what it already knows are in limiter.ts; this module
 * holds the rules both apply: what a write takes next, how large a lease is, when a key is banned, what to answer.
 *
 * Why leases (docs/rate-limiting.md has the numbers): one write per request on one item caps a key at what one
 * DynamoDB partition takes (~1,000 write units per second) and makes the cost follow the request rate. So:
 * - keys up to LIMITER.exactPerMinute take one request per write: exact counts, exact X-RateLimit-Remaining;
 * - larger keys take a block (a lease) of the window's budget with one write, sized to about
 *   LIMITER.leaseSeconds of this container's own traffic and never past the window's end, and admit from it
 *   without I/O; the budget is split over limiterShards() items;
 * - what a container already knows (a full window, a spent day, a ban) is answered without I/O until it can change;
 * - 429s are added up per container and recorded at most every LIMITER.rejectionFlushMs per key, so neither an
 *   abusive client nor a fleet makes a write per request.
 * Nothing here is ever written twice: counting writes are sent once (no SDK resend), and a write whose answer is
 * lost counts as used (503 for that request): the service may under-admit by the requests whose answers were lost,
 * never over-admit.
 */
import { BAN_POLICY, LIMITER, banSecondsFor, type PlanLimits } from '../../contract/plans.ts';
import { banMessage, quotaMessage, type BanCause } from '../../contract/deny-context.ts';
import { AppError } from './errors.ts';

export interface Windows {
  readonly nowMs: number;
  readonly nowSec: number;
  /** Start of the current UTC minute, unix seconds. */
  readonly minuteStart: number;
  readonly minuteReset: number;
  /** Start of the current UTC day, unix seconds. */
  readonly dayStart: number;
  readonly dayReset: number;
}

export function windowsAt(nowMs: number): Windows {
  const nowSec = Math.floor(nowMs / 1000);
  const minuteStart = nowSec - (nowSec % 60);
  const dayStart = nowSec - (nowSec % 86_400);
  return { nowMs, nowSec, minuteStart, minuteReset: minuteStart + 60, dayStart, dayReset: dayStart + 86_400 };
}

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

/** The counting port: conditional writes on small items, each sent once. */
export interface LimitCounters {
  take(req: TakeRequest): Promise<Take>;
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

/** A container's limiter (limiter.ts builds it): what the envelope asks of it. */
export interface Limiter {
  /** Counts one request for `subject`; a 503 (UnavailableError) when storage cannot say. */
  consume(subject: string, limits: PlanLimits, w: Windows): Promise<Consumption>;
  /** True when this container already knows, without I/O, that the request will be refused. */
  refusesLocally(subject: string, limits: PlanLimits, w: Windows): boolean;
}

export interface RateLimitHeaders {
  'X-RateLimit-Limit': string;
  'X-RateLimit-Remaining': string;
  'X-RateLimit-Reset': string;
  'Retry-After'?: string;
}

/** Headers for the window that binds soonest: the one with fewer requests left (the minute on a tie). */
function headersFor(limits: PlanLimits, c: Extract<Consumption, { allowed: true }>): RateLimitHeaders {
  const minuteBinds = c.minuteRemaining <= c.dayRemaining;
  return {
    'X-RateLimit-Limit': String(minuteBinds ? limits.perMinute : limits.perDay),
    'X-RateLimit-Remaining': String(
      minuteBinds ? Math.min(c.minuteRemaining, limits.perMinute) : Math.min(c.dayRemaining, limits.perDay),
    ),
    'X-RateLimit-Reset': String(minuteBinds ? c.minuteStart + 60 : c.dayReset),
  };
}

/** Runs the limiter for one request: headers to send, or an AppError (429) that carries them. */
export async function enforce(
  limiter: Limiter,
  subject: string,
  limits: PlanLimits,
  w: Windows,
): Promise<RateLimitHeaders> {
  const c = await limiter.consume(subject, limits, w);
  if (c.allowed) return headersFor(limits, c);
  if (c.reason === 'banned') {
    const retry = Math.max(1, c.banUntil - w.nowSec);
    throw new AppError('key_banned', banMessage(c.banUntil), {
      'X-RateLimit-Limit': String(limits.perMinute),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(c.banUntil),
      'Retry-After': String(retry),
    });
  }
  const limit = c.reason === 'minute' ? limits.perMinute : limits.perDay;
  const retry = Math.max(1, c.reset - w.nowSec);
  throw new AppError(
    c.reason === 'minute' ? 'rate_limited' : 'quota_exceeded',
    c.reason === 'minute'
      ? `Rate limit of ${limit} requests per minute exceeded: retry after ${retry} s, with exponential backoff. Requests that keep coming while limited lead to a temporary ban (${BAN_POLICY.banSeconds / 60} minutes, twice as long for each repeat in a UTC day, at most ${BAN_POLICY.maxBanSeconds / 3600} hours).`
      : quotaMessage(limit, retry),
    {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(c.reset),
      'Retry-After': String(retry),
    },
  );
}

/**
 * A key_banned 429 told who banned the key: the limiter's counters hold only the ban's end, so `enforce` words it as
 * the limiter's, and the envelope, which learns the cause from the key's standing (shared/admission.ts), rewords an
 * admin's. Same headers.
 */
export function bannedBy(err: AppError, by: BanCause): AppError {
  if (err.code !== 'key_banned' || by === 'limiter') return err;
  return new AppError('key_banned', banMessage(Number(err.headers['X-RateLimit-Reset']), by), err.headers);
}

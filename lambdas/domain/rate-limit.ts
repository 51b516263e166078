/**
 * Rate-limit rules (spec section 8): fixed per-minute and per-day windows per key, the headers every response
 * carries, and the 429s. Storage (lambdas/storage/limit-store.ts) does the atomic counting.
 */
import { BAN_POLICY, banThreshold, type PlanLimits } from '../../contract/plans.ts';
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

/** What the limiter store answers for one request. */
export type Consumption =
  | { readonly allowed: true; readonly minuteCount: number; readonly dayCount: number }
  | {
      readonly allowed: false;
      readonly reason: 'minute' | 'day';
      readonly minuteCount: number;
      readonly dayCount: number;
    }
  | { readonly allowed: false; readonly reason: 'banned'; readonly banUntil: number };

/** The counting port: counts one request for `subject` if both windows have room and it is not banned. */
export interface LimitStore {
  consume(subject: string, limits: PlanLimits, windows: Windows): Promise<Consumption>;
  /** Today's counts, for the admin tool. */
  usage(subject: string, windows: Windows): Promise<{ minuteCount: number; dayCount: number; banUntil?: number }>;
}

/**
 * What the limiter keeps per subject and UTC day (one item): the newest minute window `ms` with its count `m`, the
 * day count `d`, a ban end `banUntil`, and, for the ban, the newest rejection minute `rjm`, the time of that
 * minute's first 429 `rf` (ms) and its late rejections `rj`.
 */
export interface LimiterState {
  readonly ms?: number;
  readonly m?: number;
  readonly d?: number;
  readonly banUntil?: number;
  readonly rjm?: number;
  readonly rf?: number;
  readonly rj?: number;
}

/**
 * The next step for a request, given what the state item held when its conditional write failed:
 * - `count`: count in the open minute `minuteStart`. Windows only move forward, so a late request (stamped in a
 *   minute older than the newest one opened, after an SDK retry, latency or clock skew) counts against the newest
 *   window, never resets it;
 * - `open`: open the request's own minute (newer than any stored one), counting the request;
 * - `banned`, or `rejected` when the window that binds is full.
 */
export type LimiterStep =
  | { readonly kind: 'count'; readonly minuteStart: number }
  | { readonly kind: 'open' }
  | Exclude<Consumption, { allowed: true }>;

export function limiterStep(state: LimiterState, limits: PlanLimits, w: Windows): LimiterStep {
  if ((state.banUntil ?? 0) > w.nowSec) return { allowed: false, reason: 'banned', banUntil: state.banUntil! };
  const newest = state.ms !== undefined && state.ms >= w.minuteStart;
  const minuteCount = newest ? (state.m ?? 0) : 0;
  const dayCount = state.d ?? 0;
  if (dayCount >= limits.perDay) return { allowed: false, reason: 'day', minuteCount, dayCount };
  if (!newest) return { kind: 'open' };
  if (minuteCount >= limits.perMinute) return { allowed: false, reason: 'minute', minuteCount, dayCount };
  return { kind: 'count', minuteStart: state.ms! };
}

/**
 * How to record a rejection towards the ban, given the stored state:
 * - `open`: the first 429 of a (newer) minute window: remember its time, no late rejection yet;
 * - `late`: add one late rejection to minute `minuteStart` (the newest rejection window; never moved back);
 * - `none`: within the grace after the window's first 429 (a burst in flight, not a client ignoring 429): no write.
 */
export type RejectionStep =
  { readonly kind: 'open' } | { readonly kind: 'late'; readonly minuteStart: number } | { readonly kind: 'none' };

export function rejectionStep(state: LimiterState, w: Windows): RejectionStep {
  if (state.rjm === undefined || state.rjm < w.minuteStart || state.rf === undefined) return { kind: 'open' };
  return w.nowMs - state.rf > BAN_POLICY.graceMs ? { kind: 'late', minuteStart: state.rjm } : { kind: 'none' };
}

/**
 * Whether `lateRejections` call for a ban. At or over the threshold, not only at it: a count that stepped over
 * it (a retried ADD) or a ban write that failed gets another chance with the next late rejection.
 */
export function shouldBan(lateRejections: number, limits: PlanLimits): boolean {
  return lateRejections >= banThreshold(limits);
}

/**
 * The day items a ban starting now must be written to, latest day first: the ban lives in every day item it
 * covers, so it survives midnight, and the current day's item (the one requests read, which makes the ban take
 * effect) is written last, so a failure part-way leaves no ban that ends at midnight.
 */
export function banDays(w: Windows): { banUntil: number; days: number[] } {
  const banUntil = w.nowSec + BAN_POLICY.banSeconds;
  const days: number[] = [];
  for (let day = w.dayStart; day < banUntil; day += 86_400) days.unshift(day);
  return { banUntil, days };
}

export interface RateLimitHeaders {
  'X-RateLimit-Limit': string;
  'X-RateLimit-Remaining': string;
  'X-RateLimit-Reset': string;
  'Retry-After'?: string;
}

/** Headers for the window that binds soonest: the one with fewer requests left (the minute on a tie). */
export function headersFor(limits: PlanLimits, w: Windows, minuteCount: number, dayCount: number): RateLimitHeaders {
  const minuteLeft = Math.max(0, limits.perMinute - minuteCount);
  const dayLeft = Math.max(0, limits.perDay - dayCount);
  const minuteBinds = minuteLeft <= dayLeft;
  return {
    'X-RateLimit-Limit': String(minuteBinds ? limits.perMinute : limits.perDay),
    'X-RateLimit-Remaining': String(minuteBinds ? minuteLeft : dayLeft),
    'X-RateLimit-Reset': String(minuteBinds ? w.minuteReset : w.dayReset),
  };
}

/** Runs the limiter for one request: headers to send, or an AppError (429) that carries them. */
export async function enforce(
  store: LimitStore,
  subject: string,
  limits: PlanLimits,
  w: Windows,
): Promise<RateLimitHeaders> {
  const c = await store.consume(subject, limits, w);
  if (c.allowed) return headersFor(limits, w, c.minuteCount, c.dayCount);
  if (c.reason === 'banned') {
    const retry = Math.max(1, c.banUntil - w.nowSec);
    throw new AppError(
      'key_banned',
      `The API key is banned until ${new Date(c.banUntil * 1000).toISOString()} for repeated requests over its rate limit.`,
      {
        'X-RateLimit-Limit': String(limits.perMinute),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(c.banUntil),
        'Retry-After': String(retry),
      },
    );
  }
  const reset = c.reason === 'minute' ? w.minuteReset : w.dayReset;
  const limit = c.reason === 'minute' ? limits.perMinute : limits.perDay;
  const retry = Math.max(1, reset - w.nowSec);
  throw new AppError(
    c.reason === 'minute' ? 'rate_limited' : 'quota_exceeded',
    c.reason === 'minute'
      ? `Rate limit of ${limit} requests per minute exceeded: retry after ${retry} s, with exponential backoff. Requests that keep coming while limited lead to a temporary ban (${BAN_POLICY.banSeconds / 60} minutes).`
      : `Daily quota of ${limit} requests exceeded: retry after ${retry} s, or move to a higher plan.`,
    {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(reset),
      'Retry-After': String(retry),
    },
  );
}

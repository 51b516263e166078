/**
 * Rate-limit rules (spec section 8): fixed per-minute and per-day windows per key, the headers every response
 * carries, and the 429s. Storage (lambdas/storage/limit-store.ts) does the atomic counting.
 */
import { BAN_POLICY, type PlanLimits } from '../../contract/plans.ts';
import { AppError } from './errors.ts';

export interface Windows {
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
  return { nowSec, minuteStart, minuteReset: minuteStart + 60, dayStart, dayReset: dayStart + 86_400 };
}

/** What the limiter store answers for one request. */
export type Consumption =
  | { readonly allowed: true; readonly minuteCount: number; readonly dayCount: number }
  | { readonly allowed: false; readonly reason: 'minute' | 'day'; readonly minuteCount: number; readonly dayCount: number }
  | { readonly allowed: false; readonly reason: 'banned'; readonly banUntil: number };

/** The counting port: counts one request for `subject` if both windows have room and it is not banned. */
export interface LimitStore {
  consume(subject: string, limits: PlanLimits, windows: Windows): Promise<Consumption>;
  /** Today's counts, for the admin tool. */
  usage(subject: string, windows: Windows): Promise<{ minuteCount: number; dayCount: number; banUntil?: number }>;
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
    throw new AppError('key_banned', `The API key is banned until ${new Date(c.banUntil * 1000).toISOString()} for repeated requests over its rate limit.`, {
      'X-RateLimit-Limit': String(limits.perMinute),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(c.banUntil),
      'Retry-After': String(retry),
    });
  }
  const reset = c.reason === 'minute' ? w.minuteReset : w.dayReset;
  const limit = c.reason === 'minute' ? limits.perMinute : limits.perDay;
  const retry = Math.max(1, reset - w.nowSec);
  throw new AppError(
    c.reason === 'minute' ? 'rate_limited' : 'quota_exceeded',
    c.reason === 'minute'
      ? `Rate limit of ${limit} requests per minute exceeded: retry after ${retry} s, with exponential backoff. Repeated requests while limited lead to a temporary ban (${BAN_POLICY.rejectionsInWindow} in a minute: ${BAN_POLICY.banSeconds / 60} minutes).`
      : `Daily quota of ${limit} requests exceeded: retry after ${retry} s, or move to a higher plan.`,
    {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(reset),
      'Retry-After': String(retry),
    },
  );
}

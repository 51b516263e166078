/**
 * Why a key's request is refused: every refusal the functions make, the authorizer's and the envelope's, decided by
 * `refusalOf`. The gateway's own answers (stage and plan throttles, WAF, no Authorization header) are not here.
 *
 * It is asked at three moments, with what is known then:
 * - `gateway` (the authorizer, from the key's record and standing): expired past its notice: no key (401); banned:
 *   429 key_banned; its day spent: 429 quota_exceeded. Both 429s are a Deny the gateway caches (denyContext);
 * - `call` (the envelope, from the authorizer's context): expired: 401 key_expired; read-only on an operation that
 *   changes data: 403 key_read_only;
 * - `count` (the envelope, from the limiter's answer): over the minute's limit: 429 rate_limited; the day's quota
 *   spent: 429 quota_exceeded; banned (by the limiter or an admin): 429 key_banned. It wins over the call's refusal,
 *   so a key that keeps sending refused calls meets its limits and a ban like any other.
 * A token that is no key (forged, unknown, revoked, without limits) is refused before any of this: keys.ts keyForm
 * and usableKey.
 */
import { expiredMessage, readOnlyMessage } from '../../contract/auth.ts';
import {
  SPENT_DENY_CUTOFF_SECONDS,
  banMessage,
  quotaMessage,
  DENY_CONTEXT,
  type BanCause,
  type DenyContextKey,
} from '../../contract/deny-context.ts';
import { BAN_POLICY, type PlanLimits } from '../../contract/plans.ts';
import { AppError } from './errors.ts';
import { expiryAt, type AuthContext, type Standing } from './keys.ts';
import type { Limiter } from './limiter.ts';
import { rateLimitHeaders, type Consumption, type RateLimitHeaders, type Windows } from './rate-limit.ts';

/** An expired key's 401 says what is wrong with it (RFC 6750, 3.1), as the message does. */
const EXPIRED_CHALLENGE = 'Bearer error="invalid_token", error_description="The API key has expired"';

/** What is known of a key where it is asked: its limits, and its scope and expiry when the context carries them. */
export type KeyTerms = PlanLimits & Partial<Pick<AuthContext, 'scope' | 'validUntil'>>;

/** An operation as a read-only key's refusal names it. */
export interface Call {
  readonly changesData: boolean;
  readonly method: string;
  readonly path: string;
}

export type Asked =
  | { readonly at: 'gateway'; readonly standing: Standing | undefined; readonly cacheTtlSeconds: number }
  | { readonly at: 'call'; readonly call: Call }
  /** `bannedBy`: who the key's standing says banned it (the counters alone cannot say). */
  | { readonly at: 'count'; readonly counted: Consumption; readonly bannedBy?: BanCause };

/** The refusal of a key's request at `nowSec`, as the Error object and headers it is answered with; undefined: none. */
export function refusalOf(key: KeyTerms, nowSec: number, asked: Asked): AppError | undefined {
  switch (asked.at) {
    case 'gateway': {
      if (expiryAt(key.validUntil, nowSec) === 'gone') return new AppError('unauthorized');
      const decision = standingDecision(asked.standing, nowSec);
      return decision === 'allow' ? undefined : denial(decision, key, asked.standing!, nowSec, asked.cacheTtlSeconds);
    }
    case 'call': {
      const r = keyRefusal(key, nowSec, asked.call);
      if (!r) return undefined;
      return new AppError(r.code, r.message, r.code === 'key_expired' ? { 'WWW-Authenticate': EXPIRED_CHALLENGE } : {});
    }
    case 'count':
      return countRefusal(key, nowSec, asked.counted, asked.bannedBy);
  }
}

/**
 * Why a key the gateway let through may not make this call, checked by the envelope before any storage: expired
 * (exact at the second, whatever the age of the gateway's cached Allow), or read-only on an operation that changes
 * data (`changesData`: contract/route-types.ts writes). Undefined when it may.
 */
export function keyRefusal(
  auth: Pick<AuthContext, 'scope' | 'validUntil'>,
  nowSec: number,
  call: Call,
): { readonly code: 'key_expired' | 'key_read_only'; readonly message: string } | undefined {
  if (expiryAt(auth.validUntil, nowSec) !== 'valid')
    return { code: 'key_expired', message: expiredMessage(auth.validUntil!) };
  if (auth.scope === 'read' && call.changesData)
    return { code: 'key_read_only', message: readOnlyMessage(call.method, call.path) };
  return undefined;
}

/** The limiter's refusal of a counted request, with its headers; undefined when it was admitted. */
function countRefusal(limits: PlanLimits, nowSec: number, c: Consumption, by?: BanCause): AppError | undefined {
  if (c.allowed) return undefined;
  if (c.reason === 'banned') {
    return new AppError('key_banned', banMessage(c.banUntil, by), {
      'X-RateLimit-Limit': String(limits.perMinute),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(c.banUntil),
      'Retry-After': String(Math.max(1, c.banUntil - nowSec)),
    });
  }
  const limit = c.reason === 'minute' ? limits.perMinute : limits.perDay;
  const retry = Math.max(1, c.reset - nowSec);
  return new AppError(
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

/** Counts one request with `limiter`: the headers to send, or its refusal (an AppError carrying them). */
export async function enforce(
  limiter: Limiter,
  subject: string,
  limits: PlanLimits,
  w: Windows,
): Promise<RateLimitHeaders> {
  const c = await limiter.consume(subject, limits, w);
  if (c.allowed) return rateLimitHeaders(limits, c);
  throw countRefusal(limits, w.nowSec, c)!;
}

/**
 * What the gateway does with an authenticated key's request, from its standing:
 * - `banned`: refused (a Deny: ACCESS_DENIED, 429 `key_banned`);
 * - `spent`: its quota of today is spent, refused the same way (429 `quota_exceeded`), before it reaches a function
 *   or its plan's usage plan. Not in the day's last SPENT_DENY_CUTOFF_SECONDS: a Deny cached past midnight would
 *   refuse the new day's requests, so there the function's limiter refuses it;
 * - `allow`: counted against its plan's usage plan, and the function's limiter decides.
 * An unknown standing allows (the function's limiter still enforces both windows).
 */
export type StandingDecision = 'banned' | 'spent' | 'allow';

export function standingDecision(standing: Standing | undefined, nowSec: number): StandingDecision {
  if (!standing) return 'allow';
  if (standing.bannedUntil !== undefined && standing.bannedUntil > nowSec) return 'banned';
  const dayStart = nowSec - (nowSec % 86_400);
  const secondsLeft = dayStart + 86_400 - nowSec;
  if (standing.spentDay === dayStart && secondsLeft > SPENT_DENY_CUTOFF_SECONDS) return 'spent';
  return 'allow';
}

/**
 * A client told its day is spent is told to come back at the day's end. Seconds after the first spent Deny from
 * which another uncached request of that day means the client ignored it: the cached Deny it got has expired, and a
 * fleet of workers that each got one sends nothing more. At least a minute, so a TTL of 0 bans no fleet whose
 * requests were in flight together.
 */
export const SPENT_RETURN_SECONDS = 60;

/**
 * What the authorizer does when it denies a spent key: `ban` when it was told its spent day (a Deny, or the end of
 * its last such ban) at least max(TTL, SPENT_RETURN_SECONDS) before, so a spent key that keeps sending is banned as
 * the limiter bans a key that keeps sending after its 429s (its requests never reach the limiter); `mark` when it has
 * not been denied that day yet; else nothing. So a spent key costs at most two writes a day besides two a ban. A note
 * at the day's first second is a ban that ended with the day before.
 */
export function spentRepeat(standing: Standing, nowSec: number, cacheTtlSeconds: number): 'ban' | 'mark' | 'none' {
  const dayStart = nowSec - (nowSec % 86_400);
  const at = standing.spentDeniedAt;
  if (at === undefined || at <= dayStart) return 'mark';
  return nowSec - at >= Math.max(cacheTtlSeconds, SPENT_RETURN_SECONDS) ? 'ban' : 'none';
}

/**
 * The gateway's 429 for a standing. API Gateway caches the Deny for the authorizer's TTL and replays it unchanged, so
 * a banned key is refused until the later of its ban's end and the cached answer's: a client told the ban's end alone
 * would, when the ban ends within the TTL, come back to the cached Deny. A replay repeats this Retry-After, so it errs
 * long by the answer's age (at most the TTL), never short. A spent day's end is never within the TTL, so it is exact.
 */
function denial(
  decision: Exclude<StandingDecision, 'allow'>,
  limits: PlanLimits,
  standing: Standing,
  nowSec: number,
  cacheTtlSeconds: number,
): AppError {
  const spent = decision === 'spent';
  const until = spent ? nowSec - (nowSec % 86_400) + 86_400 : Math.max(standing.bannedUntil!, nowSec + cacheTtlSeconds);
  const retryAfter = Math.max(1, until - nowSec);
  const limit = spent ? limits.perDay : limits.perMinute;
  return new AppError(
    spent ? 'quota_exceeded' : 'key_banned',
    spent ? quotaMessage(limits.perDay, retryAfter) : banMessage(until, standing.bannedBy),
    {
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(until),
      'Retry-After': String(retryAfter),
    },
  );
}

/**
 * A gateway refusal as the Deny's `context` carries it (contract DENY_CONTEXT), which the ACCESS_DENIED gateway
 * response maps into its code, message, X-RateLimit-Limit, X-RateLimit-Reset and Retry-After.
 */
export function denyContextOf(refusal: AppError): Record<DenyContextKey, string | number> {
  const until = Number(refusal.headers['X-RateLimit-Reset']);
  return {
    [DENY_CONTEXT.code]: refusal.code,
    [DENY_CONTEXT.limit]: Number(refusal.headers['X-RateLimit-Limit']),
    [DENY_CONTEXT.retryAfter]: Number(refusal.headers['Retry-After']),
    [DENY_CONTEXT.until]: until,
    [DENY_CONTEXT.untilIso]: new Date(until * 1000).toISOString(),
    [DENY_CONTEXT.message]: refusal.message,
  };
}

/** The Deny's context for a key whose standing is `decision` (what refusalOf answers at the gateway). */
export function denyContext(
  decision: Exclude<StandingDecision, 'allow'>,
  auth: Pick<AuthContext, 'perMinute' | 'perDay'>,
  standing: Standing,
  nowSec: number,
  cacheTtlSeconds: number,
): Record<DenyContextKey, string | number> {
  return denyContextOf(denial(decision, auth, standing, nowSec, cacheTtlSeconds));
}

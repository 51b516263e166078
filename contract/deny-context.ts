/**
 * What the authorizer's Deny carries in its `context`, for the ACCESS_DENIED gateway response to map. Header mappings
 * read `context.authorizer.<key>`, the body template `$context.authorizer.<key>` (developer guide: "Gateway
 * responses"). A key may hold letters, digits and `_` only. The authorizer denies two standings, a ban and a spent
 * day. Each Deny carries the function's code, message and headers for it, so the client gets one answer either way.
 */
export const DENY_CONTEXT = {
  /** The Error object's code: `key_banned` or `quota_exceeded`. */
  code: 'denyCode',
  /** X-RateLimit-Limit: the minute limit for a ban, the day limit for a spent day (as the function's). */
  limit: 'denyLimit',
  /** Seconds to wait, as of the authorizer's answer (a replay of the cached answer repeats it: it errs long). */
  retryAfter: 'denyRetryAfter',
  /** When the refusal ends, unix seconds: exact however old the cached answer is. */
  until: 'denyUntil',
  /** The same moment in ISO 8601. */
  untilIso: 'denyUntilIso',
  /** The whole message: its wording depends on the standing and on who banned the key. */
  message: 'denyMessage',
} as const;
export type DenyContextKey = (typeof DENY_CONTEXT)[keyof typeof DENY_CONTEXT];

/**
 * In the last this-many seconds of its UTC day, a spent key is left to the function's limiter, not denied.
 * This is longer than any stage's authorizer cache TTL, so no cached Deny outlives the day.
 */
export const SPENT_DENY_CUTOFF_SECONDS = 300;

/** Who banned a key: the rate limiter (requests that kept coming while limited) or an admin (`keys ban`). */
export type BanCause = 'limiter' | 'admin';

/**
 * What a banned key is told, by the function (its 429 key_banned) and by the gateway (the Deny's message) alike.
 * No quote or backslash: the gateway substitutes it into a JSON string as it is.
 */
export function banMessage(untilSec: number, by: BanCause = 'limiter'): string {
  const until = new Date(untilSec * 1000).toISOString();
  return by === 'admin'
    ? `The API key is banned by an administrator until ${until}.`
    : `The API key is banned until ${until} for repeated requests over its rate limit.`;
}

/** What a key whose day is spent is told, by the function and by the gateway alike. */
export function quotaMessage(perDay: number, retryAfterSec: number): string {
  return `Daily quota of ${perDay} requests exceeded: retry after ${retryAfterSec} s, or move to a higher plan.`;
}

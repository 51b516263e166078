/**
 * What the authorizer's answer carries in its `context` for the gateway responses to map: API Gateway lets a
 * gateway response's header mappings read `context.authorizer.<key>` and its body template
 * `$context.authorizer.<key>` (developer guide: "Gateway responses", "Parameter mapping source reference", and
 * "Variables for data transformations": the stringified value of the key in the context the Lambda authorizer
 * returned). A key may hold letters, digits and `_` only. Nothing in those pages ties the mapping to one response
 * type: any gateway response produced after the authorizer answered can read its context, so ACCESS_DENIED (a Deny)
 * and QUOTA_EXCEEDED (an Allow whose usage key's quota is spent) both do.
 */

/**
 * A banned key's Deny: when the key is served again (lambdas/domain/keys.ts denyContext), the later of the ban's end
 * and the end of API Gateway's cached Deny, and the message, which says who banned it.
 */
export const DENY_CONTEXT = {
  /** Seconds to wait, as of the authorizer's answer (a replay of the cached answer repeats it: it errs long). */
  retryAfter: 'denyRetryAfter',
  /** When the refusal ends, unix seconds: exact however old the cached answer is. */
  until: 'denyUntil',
  /** The same moment in ISO 8601. */
  untilIso: 'denyUntilIso',
  /** The whole message (banMessage): its wording depends on who banned the key, which a template cannot choose. */
  message: 'denyMessage',
} as const;
export type DenyContextKey = (typeof DENY_CONTEXT)[keyof typeof DENY_CONTEXT];

/**
 * Every Allow: what the QUOTA_EXCEEDED gateway response says if the key's usage key has spent its quota
 * (lambdas/domain/keys.ts quotaContext). For a key whose day is spent (counted on the spent-keys API key) these are
 * the function's exact values: its day limit, the end of its UTC day and the seconds until then. For any other key
 * (a pool member's quota spent: the gateway cannot say whose requests spent it) they are QUOTA_FALLBACK. They are in
 * every Allow, not only a spent key's, because a mapping whose variable is missing has no documented fallback: the
 * static values have to come from the answer too.
 */
export const QUOTA_CONTEXT = {
  limit: 'quotaLimit',
  reset: 'quotaReset',
  retryAfter: 'quotaRetryAfter',
} as const;
export type QuotaContextKey = (typeof QUOTA_CONTEXT)[keyof typeof QUOTA_CONTEXT];

/**
 * A quota the gateway cannot attribute to one key: `0` for "produced by the gateway, not counted against any key",
 * and an hour's wait (a usage-plan day quota is a backstop that an honouring client does not reach).
 */
export const QUOTA_FALLBACK: Readonly<Record<QuotaContextKey, string>> = {
  [QUOTA_CONTEXT.limit]: '0',
  [QUOTA_CONTEXT.reset]: '0',
  [QUOTA_CONTEXT.retryAfter]: '3600',
};

export type AuthorizerContextKey = DenyContextKey | QuotaContextKey;

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

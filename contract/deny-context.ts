/**
 * What the authorizer's Deny carries in its `context` for the ACCESS_DENIED response to map: API Gateway lets a
 * gateway response's header mappings read `context.authorizer.<key>` and its body template
 * `$context.authorizer.<key>` (developer guide: "Gateway responses", "Parameter mapping source reference", and
 * "Variables for data transformations": the stringified value of the key in the context the Lambda authorizer
 * returned). A key may hold letters, digits and `_` only. The values say when the key is served again
 * (lambdas/domain/keys.ts denyContext): the later of the ban's end and the end of API Gateway's cached Deny.
 */
export const DENY_CONTEXT = {
  /** Seconds to wait, as of the authorizer's answer (a replay of the cached answer repeats it: it errs long). */
  retryAfter: 'denyRetryAfter',
  /** When the refusal ends, unix seconds: exact however old the cached answer is. */
  until: 'denyUntil',
  /** The same moment in ISO 8601, for the message. */
  untilIso: 'denyUntilIso',
} as const;
export type DenyContextKey = (typeof DENY_CONTEXT)[keyof typeof DENY_CONTEXT];

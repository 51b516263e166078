/**
 * The errors API Gateway itself answers, as plain data. The CDK construct builds them into the template, and the local
 * gateway answers from that template. So these errors look the same in the cloud and on `npm start`.
 *
 * The gateway cannot count requests, so its X-RateLimit-* headers are a static `0`: not counted against any key.
 * Retry-After on THROTTLED is one token-bucket refill (1 s). ACCESS_DENIED takes its code, message and headers from
 * the authorizer's Deny (contract/deny-context.ts), so a refused key is told what the function would tell it.
 */
import { DENY_CONTEXT, type DenyContextKey } from './deny-context.ts';
import { ERROR_CODES, JSON_HEADERS, UNCOUNTED_RATE_LIMIT_HEADERS, errorObject, type ErrorCode } from './errors.ts';

/**
 * Every gateway response type API Gateway has (REST API reference, GatewayResponse.responseType; the developer guide's
 * "Gateway response types for API Gateway" gives their default statuses). Each gets its own response below.
 * A type without one falls back to DEFAULT_4XX/DEFAULT_5XX, whose status would replace its own.
 */
export const GATEWAY_RESPONSE_TYPES = [
  'ACCESS_DENIED',
  'API_CONFIGURATION_ERROR',
  'AUTHORIZER_CONFIGURATION_ERROR',
  'AUTHORIZER_FAILURE',
  'BAD_REQUEST_BODY',
  'BAD_REQUEST_PARAMETERS',
  'DEFAULT_4XX',
  'DEFAULT_5XX',
  'EXPIRED_TOKEN',
  'INTEGRATION_FAILURE',
  'INTEGRATION_TIMEOUT',
  'INVALID_API_KEY',
  'INVALID_SIGNATURE',
  'MISSING_AUTHENTICATION_TOKEN',
  'QUOTA_EXCEEDED',
  'REQUEST_TOO_LARGE',
  'RESOURCE_NOT_FOUND',
  'THROTTLED',
  'UNAUTHORIZED',
  'UNSUPPORTED_MEDIA_TYPE',
  'WAF_FILTERED',
] as const;
export type GatewayResponseType = (typeof GATEWAY_RESPONSE_TYPES)[number];

export interface GatewayResponseSpec {
  readonly type: GatewayResponseType;
  readonly code: ErrorCode;
  readonly status: number;
  /** May name `$context.authorizer.<key>` (one of contract/deny-context.ts's), rendered per request. */
  readonly message: string;
  /**
   * The body's code is the authorizer's (`$context.authorizer.<key>`), one of `codes`; `code` is the one documented
   * first.
   */
  readonly codeFrom?: { readonly key: DenyContextKey; readonly codes: readonly ErrorCode[] };
  /** Static header values. */
  readonly headers: Readonly<Record<string, string>>;
  /** Headers mapped from the authorizer's `context`: header name → key (one of contract/deny-context.ts's). */
  readonly authorizerHeaders?: Readonly<Record<string, DenyContextKey>>;
}

/**
 * Never cached: an error for one caller (a 401 for its key, a 429 for its quota) must not reach another through a
 * shared cache. Nor may it be replayed to the same client after its situation changed.
 */
const NO_STORE = { 'Cache-Control': 'no-store' } as const;

const spec = (
  type: GatewayResponseType,
  code: ErrorCode,
  extra: Record<string, string> = {},
  message: string = ERROR_CODES[code].message,
): GatewayResponseSpec => ({
  type,
  code,
  status: ERROR_CODES[code].status,
  message,
  headers: { ...JSON_HEADERS, ...UNCOUNTED_RATE_LIMIT_HEADERS, ...NO_STORE, ...extra },
});

/** A response whose `mapped` headers come from the authorizer's context instead of their static values. */
const fromAuthorizer = (
  s: GatewayResponseSpec,
  mapped: Readonly<Record<string, DenyContextKey>>,
  codeFrom?: GatewayResponseSpec['codeFrom'],
): GatewayResponseSpec => ({
  ...s,
  ...(codeFrom ? { codeFrom } : {}),
  headers: Object.fromEntries(Object.entries(s.headers).filter(([name]) => !(name in mapped))),
  authorizerHeaders: mapped,
});

/**
 * One response per type, with the type's default status unless the spec wants another. An unknown route
 * (MISSING_AUTHENTICATION_TOKEN, default 403) is a 404; the transient 5xx types are 503 with Retry-After.
 * DEFAULT_4XX and DEFAULT_5XX catch only errors no type names, such as a Lambda proxy failure (502 by default).
 * Their status is fixed: a template only substitutes variables and has no status variable (no VTL).
 * Only a fixed status lets the body's `status` equal the HTTP status.
 */
export const GATEWAY_RESPONSES: readonly GatewayResponseSpec[] = [
  spec('UNAUTHORIZED', 'unauthorized', { 'WWW-Authenticate': 'Bearer' }),
  // The authorizer denies a banned key and a key whose day is spent, and its Deny says which, with the function's
  // code, message and headers for that standing (DENY_CONTEXT).
  fromAuthorizer(
    spec('ACCESS_DENIED', 'key_banned', {}, `$context.authorizer.${DENY_CONTEXT.message}`),
    {
      'Retry-After': DENY_CONTEXT.retryAfter,
      'X-RateLimit-Limit': DENY_CONTEXT.limit,
      'X-RateLimit-Reset': DENY_CONTEXT.until,
    },
    { key: DENY_CONTEXT.code, codes: ['key_banned', 'quota_exceeded'] },
  ),
  spec('INVALID_API_KEY', 'forbidden', {}, 'The API key is not on a usage plan for this stage.'),
  spec('EXPIRED_TOKEN', 'forbidden', {}, "The request's AWS credentials have expired."),
  spec('INVALID_SIGNATURE', 'forbidden', {}, "The request's AWS signature is not valid."),
  spec('WAF_FILTERED', 'forbidden', {}, 'The request was blocked by the web application firewall.'),
  spec('MISSING_AUTHENTICATION_TOKEN', 'not_found'),
  spec('RESOURCE_NOT_FOUND', 'not_found'),
  spec('THROTTLED', 'rate_limited', { 'Retry-After': '1' }),
  // No usage plan has a quota (a spent day is the authorizer's Deny): kept for completeness, never expected.
  spec('QUOTA_EXCEEDED', 'quota_exceeded'),
  spec('BAD_REQUEST_BODY', 'validation_failed'),
  spec('BAD_REQUEST_PARAMETERS', 'validation_failed'),
  spec('REQUEST_TOO_LARGE', 'payload_too_large'),
  spec('UNSUPPORTED_MEDIA_TYPE', 'unsupported_media_type'),
  // Not transient: a retry cannot help, so no Retry-After.
  spec('API_CONFIGURATION_ERROR', 'internal_error'),
  spec('AUTHORIZER_FAILURE', 'service_unavailable', { 'Retry-After': '1' }),
  spec('AUTHORIZER_CONFIGURATION_ERROR', 'service_unavailable', { 'Retry-After': '1' }),
  spec('INTEGRATION_FAILURE', 'service_unavailable', { 'Retry-After': '1' }),
  spec('INTEGRATION_TIMEOUT', 'service_unavailable', { 'Retry-After': '1' }),
  spec('DEFAULT_4XX', 'bad_request'),
  spec('DEFAULT_5XX', 'service_unavailable', { 'Retry-After': '1' }),
];

/** The 405 answer of the MOCK `ANY` method on each resource. */
export function methodNotAllowed(allow: readonly string[]): {
  status: number;
  headers: Record<string, string>;
  body: string;
} {
  const e = ERROR_CODES.method_not_allowed;
  return {
    status: e.status,
    headers: { ...JSON_HEADERS, ...UNCOUNTED_RATE_LIMIT_HEADERS, ...NO_STORE, Allow: allow.join(', ') },
    body: JSON.stringify(errorObject('method_not_allowed', `${e.message} Allowed: ${allow.join(', ')}.`)),
  };
}

/**
 * The request content types the MOCK 405 methods map. A MOCK integration answers with the status its request template
 * produces, which the integration response turns into the 405. A body passed through instead is no such document, and
 * the mock fails with a 500. So the mocks use passthrough NEVER with this template for each type below.
 * These get the 405 whatever the body; a request without Content-Type counts as application/json.
 * Any other type gets UNSUPPORTED_MEDIA_TYPE (415), which is never retried.
 * API Gateway matches mapping templates by exact media type: there is no wildcard.
 */
export const METHOD_NOT_ALLOWED_CONTENT_TYPES = [
  'application/json',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/problem+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/xml',
  'text/xml',
  'text/plain',
  'text/html',
  'text/csv',
  'application/octet-stream',
] as const;

/** What each of those maps a request to: the MOCK integration's status selector. */
export const MOCK_REQUEST_TEMPLATE = '{"statusCode": 200}';

/**
 * The errors API Gateway itself produces, as plain data: the CDK gateway-responses construct builds them into the
 * template, and the local gateway answers from that template, so a gateway-generated error looks the same in the
 * cloud and on `npm start`.
 *
 * The gateway cannot count requests, so its X-RateLimit-* headers are static: `0` means "produced by the gateway,
 * not counted against any key" (locally too). Retry-After on
 * THROTTLED is one token-bucket refill (1 s); on QUOTA_EXCEEDED an hour (the usage-plan day quota is a backstop).
 */
import { ERROR_CODES, type ErrorCode } from './errors.ts';

export type GatewayResponseType =
  | 'UNAUTHORIZED'
  | 'ACCESS_DENIED'
  | 'INVALID_API_KEY'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'THROTTLED'
  | 'QUOTA_EXCEEDED'
  | 'BAD_REQUEST_BODY'
  | 'BAD_REQUEST_PARAMETERS'
  | 'REQUEST_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'AUTHORIZER_FAILURE'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX';

export interface GatewayResponseSpec {
  readonly type: GatewayResponseType;
  readonly code: ErrorCode;
  readonly status: number;
  readonly message: string;
  readonly headers: Readonly<Record<string, string>>;
}

export const UNCOUNTED_RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': '0',
  'X-RateLimit-Remaining': '0',
  'X-RateLimit-Reset': '0',
} as const;

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
  headers: { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff', ...UNCOUNTED_RATE_LIMIT_HEADERS, ...extra },
});

export const GATEWAY_RESPONSES: readonly GatewayResponseSpec[] = [
  spec('UNAUTHORIZED', 'unauthorized', { 'WWW-Authenticate': 'Bearer' }),
  spec('ACCESS_DENIED', 'forbidden'),
  spec('INVALID_API_KEY', 'forbidden', {}, 'The API key is not on a usage plan for this stage.'),
  spec('MISSING_AUTHENTICATION_TOKEN', 'not_found'),
  spec('THROTTLED', 'rate_limited', { 'Retry-After': '1' }),
  spec('QUOTA_EXCEEDED', 'quota_exceeded', { 'Retry-After': '3600' }),
  spec('BAD_REQUEST_BODY', 'validation_failed'),
  spec('BAD_REQUEST_PARAMETERS', 'validation_failed'),
  spec('REQUEST_TOO_LARGE', 'payload_too_large'),
  spec('UNSUPPORTED_MEDIA_TYPE', 'unsupported_media_type'),
  spec('AUTHORIZER_FAILURE', 'service_unavailable', { 'Retry-After': '1' }),
  spec('AUTHORIZER_CONFIGURATION_ERROR', 'service_unavailable', { 'Retry-After': '1' }),
  spec('INTEGRATION_FAILURE', 'service_unavailable', { 'Retry-After': '1' }),
  spec('INTEGRATION_TIMEOUT', 'service_unavailable', { 'Retry-After': '1' }),
  spec('DEFAULT_4XX', 'bad_request'),
  spec('DEFAULT_5XX', 'service_unavailable', { 'Retry-After': '1' }),
];

export function gatewayResponse(type: GatewayResponseType): GatewayResponseSpec {
  return GATEWAY_RESPONSES.find((r) => r.type === type)!;
}

/** The 405 answer of the MOCK `ANY` method on each resource. */
export function methodNotAllowed(allow: readonly string[]): { status: number; headers: Record<string, string>; body: string } {
  const e = ERROR_CODES.method_not_allowed;
  return {
    status: e.status,
    headers: {
      'Content-Type': 'application/json',
      'X-Content-Type-Options': 'nosniff',
      ...UNCOUNTED_RATE_LIMIT_HEADERS,
      Allow: allow.join(', '),
    },
    body: JSON.stringify({ code: 'method_not_allowed', message: `${e.message} Allowed: ${allow.join(', ')}.`, status: e.status }),
  };
}

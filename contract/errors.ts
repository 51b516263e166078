/**
 * The error codes and the spec's Error object. Every error response, whoever produces it (handler, limiter,
 * authorizer, local gateway, API Gateway's own gateway responses), is built from ERROR_CODES.
 */
export const ERROR_CODES = {
  bad_request: { status: 400, message: 'The request is not valid.' },
  validation_failed: { status: 400, message: 'The request has missing or invalid values.' },
  invalid_json: { status: 400, message: 'The request body is not valid JSON.' },
  invalid_cursor: { status: 400, message: 'The cursor is not valid for this request.' },
  unauthorized: { status: 401, message: 'A valid API key is required: send Authorization: Bearer <API_KEY>.' },
  forbidden: { status: 403, message: 'The API key is not allowed to call this operation.' },
  not_found: { status: 404, message: 'The requested resource could not be found.' },
  method_not_allowed: { status: 405, message: 'The method is not allowed on this resource.' },
  idempotency_in_progress: { status: 409, message: 'A request with this Idempotency-Key is still in progress.' },
  endpoint_removed: { status: 410, message: 'This operation has been removed.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, message: 'The request body must be sent as application/json.' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used with a different request.' },
  rate_limited: { status: 429, message: 'Rate limit exceeded: wait for Retry-After seconds, then retry with backoff.' },
  quota_exceeded: { status: 429, message: 'Daily quota exceeded: wait for Retry-After seconds.' },
  key_banned: { status: 429, message: 'The API key is temporarily banned for ignoring rate limits.' },
  request_headers_too_large: { status: 431, message: 'The request headers are too large.' },
  internal_error: { status: 500, message: 'Something went wrong on our side.' },
  not_implemented: { status: 501, message: 'This operation is not implemented yet.' },
  service_unavailable: {
    status: 503,
    message: 'The service is temporarily unavailable: retry after Retry-After seconds.',
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The spec's Error object. */
export interface ErrorBody {
  readonly code: ErrorCode;
  readonly message: string;
  readonly status: number;
}

/** The spec's Error object for `code`, with the code's own message unless a more precise one is given. */
export function errorObject(code: ErrorCode, message: string = ERROR_CODES[code].message): ErrorBody {
  return { code, message, status: ERROR_CODES[code].status };
}

/** Headers of every JSON response, whoever answers (function, gateway response, MOCK integration). */
export const JSON_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'application/json',
  'X-Content-Type-Options': 'nosniff',
};

/**
 * On an error answered before the limiter counted the call (by the gateway, or before the limiter ran): the
 * X-RateLimit-* headers the spec requires on every response, saying nothing was counted. (Kept here rather than with
 * the gateway responses so a function bundle does not carry the gateway-response table.)
 */
export const UNCOUNTED_RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': '0',
  'X-RateLimit-Remaining': '0',
  'X-RateLimit-Reset': '0',
} as const;

/**
 * The error codes and the spec's Error object. Every error response is built from ERROR_CODES, whoever answers it
 * (handler, limiter, authorizer, local gateway, API Gateway's gateway responses).
 */
/**
 * One error code: its HTTP status and default message, and for the generated error tables (lib/api/error-tables.ts)
 * when it is answered and whether a client retries. The prose ships in every function bundle.
 * That small cost keeps a new code a one-place change.
 */
export interface ErrorSpec {
  readonly status: number;
  readonly message: string;
  readonly when: string;
  readonly retry: string;
}

export const ERROR_CODES = {
  bad_request: {
    status: 400,
    message: 'The request is not valid.',
    when: 'The gateway rejected the request (generic 4xx).',
    retry: 'no',
  },
  validation_failed: {
    status: 400,
    message: 'The request has missing or invalid values.',
    when: 'Missing or invalid body fields, query or path parameters or request headers; an undeclared query parameter.',
    retry: 'no',
  },
  invalid_json: {
    status: 400,
    message: 'The request body is not valid JSON.',
    when: 'The body is not valid JSON.',
    retry: 'no',
  },
  invalid_cursor: {
    status: 400,
    message: 'The cursor is not valid for this request.',
    when: 'A forged, expired or mismatched pagination cursor.',
    retry: 'no',
  },
  unauthorized: {
    status: 401,
    message: 'A valid API key is required: send Authorization: Bearer <API_KEY>.',
    when: 'No, malformed, unknown or revoked API key, or one that expired more than a day ago.',
    retry: 'no',
  },
  key_expired: {
    status: 401,
    message: 'The API key has expired.',
    when: 'The API key passed its expiry less than a day ago (the message says when); after that, `unauthorized`.',
    retry: 'no: use a key that has not expired',
  },
  forbidden: {
    status: 403,
    message: 'The API key is not allowed to call this operation.',
    when: 'The key may not call this operation (gateway).',
    retry: 'no',
  },
  key_read_only: {
    status: 403,
    message: 'The API key may only read: this operation changes data.',
    when: 'A read-only API key called an operation that changes data.',
    retry: 'no: use a key that may write',
  },
  not_found: {
    status: 404,
    message: 'The requested resource could not be found.',
    when: 'An id no item has, or unknown path (gateway).',
    retry: 'no',
  },
  method_not_allowed: {
    status: 405,
    message: 'The method is not allowed on this resource.',
    when: 'Method not supported on a known path (gateway; Allow lists the methods).',
    retry: 'no',
  },
  idempotency_in_progress: {
    status: 409,
    message: 'A request with this Idempotency-Key is still in progress.',
    when: 'A create with this Idempotency-Key is still in flight.',
    retry: 'not automatic: retry later',
  },
  endpoint_removed: {
    status: 410,
    message: 'This operation has been removed.',
    when: 'A deprecated operation after its sunset.',
    retry: 'no',
  },
  payload_too_large: {
    status: 413,
    message: 'The request body is too large.',
    when: 'Request body over 8 KiB (service) or 10 MiB (gateway).',
    retry: 'no',
  },
  unsupported_media_type: {
    status: 415,
    message: 'The request body must be sent as application/json.',
    when: 'POST body not sent as application/json.',
    retry: 'no',
  },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key was used with a different request.',
    when: 'Same Idempotency-Key, different body.',
    retry: 'no',
  },
  rate_limited: {
    status: 429,
    message: 'Rate limit exceeded: wait for Retry-After seconds, then retry with backoff.',
    when: 'Per-minute limit of the plan exceeded.',
    retry: 'after Retry-After',
  },
  quota_exceeded: {
    status: 429,
    message: 'Daily quota exceeded: wait for Retry-After seconds.',
    when: 'Per-day quota of the plan exceeded.',
    retry: 'after Retry-After',
  },
  key_banned: {
    status: 429,
    message: 'The API key is temporarily banned for ignoring rate limits.',
    when: 'Key temporarily banned for repeated requests while limited.',
    retry: 'after Retry-After (long)',
  },
  request_headers_too_large: {
    status: 431,
    message: 'The request headers are too large.',
    when: "The request's headers are over API Gateway's 10,240 bytes.",
    retry: 'no: send smaller headers',
  },
  internal_error: {
    status: 500,
    message: 'Something went wrong on our side.',
    when: 'Unexpected error in the service.',
    retry: 'yes (GET; POST only with Idempotency-Key)',
  },
  not_implemented: {
    status: 501,
    message: 'This operation is not implemented yet.',
    when: 'An operation whose contract is not specified yet.',
    retry: 'no',
  },
  service_unavailable: {
    status: 503,
    message: 'The service is temporarily unavailable: retry after Retry-After seconds.',
    when: 'Database or gateway integration unavailable.',
    retry: 'after Retry-After',
  },
} as const satisfies Record<string, ErrorSpec>;

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
 * The X-RateLimit-* headers of an error answered before the limiter counted the call (by the gateway or the function).
 * The spec requires them on every response; the zeros say nothing was counted. They live here, not with the gateway
 * responses, so function bundles do not carry that table.
 */
export const UNCOUNTED_RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': '0',
  'X-RateLimit-Remaining': '0',
  'X-RateLimit-Reset': '0',
} as const;

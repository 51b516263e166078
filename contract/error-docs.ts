/**
 * What each error code means to a client, for the docs' error tables (lib/api/docs-tables.ts renders them between
 * generated markers). Apart from contract/errors.ts so the function bundles, which import the codes, carry none of
 * this prose; `satisfies Record<ErrorCode, …>` names this table when a code is added.
 */
import type { ErrorCode } from './errors.ts';

/** Per code: when it is answered, and whether and when a client retries. */
export type ErrorDoc = readonly [when: string, retry: string];

export const ERROR_DOCS = {
  bad_request: ['The gateway rejected the request (generic 4xx).', 'no'],
  validation_failed: [
    'Missing or invalid body fields, query or path parameters or request headers; an undeclared query parameter.',
    'no',
  ],
  invalid_json: ['The body is not valid JSON.', 'no'],
  invalid_cursor: ['A forged, expired or mismatched pagination cursor.', 'no'],
  unauthorized: ['No, malformed, unknown or revoked API key.', 'no'],
  forbidden: ['The key may not call this operation (gateway).', 'no'],
  not_found: ['Unknown pet id, or unknown path (gateway).', 'no'],
  method_not_allowed: ['Method not supported on a known path (gateway; Allow lists the methods).', 'no'],
  idempotency_in_progress: ['A create with this Idempotency-Key is still in flight.', 'not automatic: retry later'],
  endpoint_removed: ['A deprecated operation after its sunset.', 'no'],
  payload_too_large: ['Request body over 8 KiB (service) or 10 MiB (gateway).', 'no'],
  unsupported_media_type: ['POST body not sent as application/json.', 'no'],
  idempotency_key_reused: ['Same Idempotency-Key, different body.', 'no'],
  rate_limited: ['Per-minute limit of the plan exceeded.', 'after Retry-After'],
  quota_exceeded: ['Per-day quota of the plan exceeded.', 'after Retry-After'],
  key_banned: ['Key temporarily banned for repeated requests while limited.', 'after Retry-After (long)'],
  request_headers_too_large: ["The request's headers are over API Gateway's 10,240 bytes.", 'no: send smaller headers'],
  internal_error: ['Unexpected error in the service.', 'yes (GET; POST only with Idempotency-Key)'],
  not_implemented: ['An operation whose contract is not specified yet.', 'no'],
  service_unavailable: ['Database or gateway integration unavailable.', 'after Retry-After'],
} as const satisfies Record<ErrorCode, ErrorDoc>;

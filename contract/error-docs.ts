/**
 * What each error code means to a client, for the docs' error tables (lib/api/docs-tables.ts renders them between
 * generated markers). Apart from contract/errors.ts so the function bundles, which import the codes, carry none of
 * this prose; `satisfies Record<ErrorCode, …>` names this table when a code is added.
 */
import type { ErrorCode } from './errors.ts';

export interface ErrorDoc {
  /** When the code is answered. */
  readonly when: string;
  /** Whether and when a client retries. */
  readonly retry: string;
}

export const ERROR_DOCS = {
  bad_request: { when: 'The gateway rejected the request (generic 4xx).', retry: 'no' },
  validation_failed: {
    when: 'Missing or invalid body fields, query or path parameters, or request headers; an undeclared query parameter.',
    retry: 'no',
  },
  invalid_json: { when: 'The body is not valid JSON.', retry: 'no' },
  invalid_cursor: { when: 'A forged, expired or mismatched pagination cursor.', retry: 'no' },
  unauthorized: { when: 'No, malformed, unknown or revoked API key.', retry: 'no' },
  forbidden: { when: 'The key may not call this operation (gateway).', retry: 'no' },
  not_found: { when: 'Unknown pet id, or unknown path (gateway).', retry: 'no' },
  method_not_allowed: {
    when: 'Method not supported on a known path (gateway; Allow lists the methods).',
    retry: 'no',
  },
  idempotency_in_progress: {
    when: 'A create with this Idempotency-Key is still in flight.',
    retry: 'not automatic: retry later',
  },
  endpoint_removed: { when: 'A deprecated operation after its sunset.', retry: 'no' },
  payload_too_large: { when: 'Request body over 8 KiB (service) or 10 MiB (gateway).', retry: 'no' },
  unsupported_media_type: { when: 'POST body not sent as application/json.', retry: 'no' },
  idempotency_key_reused: { when: 'Same Idempotency-Key, different body.', retry: 'no' },
  rate_limited: { when: 'Per-minute limit of the plan exceeded.', retry: 'after Retry-After' },
  quota_exceeded: { when: 'Per-day quota of the plan exceeded.', retry: 'after Retry-After' },
  key_banned: {
    when: 'Key temporarily banned for repeated requests while limited.',
    retry: 'after Retry-After (long)',
  },
  request_headers_too_large: {
    when: "The request's headers are over API Gateway's 10,240 bytes.",
    retry: 'no: send smaller headers',
  },
  internal_error: { when: 'Unexpected error in the service.', retry: 'yes (GET; POST only with Idempotency-Key)' },
  not_implemented: { when: 'An operation whose contract is not specified yet.', retry: 'no' },
  service_unavailable: { when: 'Database or gateway integration unavailable.', retry: 'after Retry-After' },
} as const satisfies Record<ErrorCode, ErrorDoc>;

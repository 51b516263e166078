/** What several operations share in their route entries. */
import type { ErrorCode } from '../errors.ts';
import { MAX_BODY_BYTES } from '../schemas.ts';
import { STATE_TABLE } from '../tables.ts';
import type { ErrorResponseSpec, TableGrant } from '../route-types.ts';

/** The table access every operation needs for the rate limiter: a conditional UpdateItem on its window item. */
export const LIMITER_GRANT: TableGrant = { table: STATE_TABLE, actions: ['dynamodb:UpdateItem'] };

/** The 400 response of an operation, with the codes it may carry (`bad_request` is always possible). */
export const badRequest = (codes: readonly ErrorCode[], description: string): ErrorResponseSpec => ({
  status: 400,
  description,
  codes: [...codes, 'bad_request'],
});

/** The errors of every operation that reads a JSON body, beyond its 400 (the checks made before parsing it). */
export const BODY_ERRORS: readonly ErrorResponseSpec[] = [
  { status: 413, description: `The body is larger than ${MAX_BODY_BYTES} bytes.`, codes: ['payload_too_large'] },
  { status: 415, description: 'The body is not sent as application/json.', codes: ['unsupported_media_type'] },
];

/** What several operations share in their route entries. */
import type { ErrorCode } from '../errors.ts';
import { STATE_TABLE } from '../tables.ts';
import type { ErrorResponseSpec, TableGrant } from '../route-types.ts';

/** Every operation runs the rate limiter: conditional UpdateItem on its window item. */
export const RATE_LIMITER: TableGrant = { table: STATE_TABLE, actions: ['dynamodb:UpdateItem'] };

/** The 400 response of an operation, with the codes it may carry (`bad_request` is always possible). */
export const badRequest = (codes: readonly ErrorCode[], description: string): ErrorResponseSpec => ({
  status: 400,
  description,
  codes: [...codes, 'bad_request'],
});

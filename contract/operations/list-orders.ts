/** The listOrders operation: everything known about it, in one entry (contract/routes.ts lists them all). */
import { LIMITER_GRANT } from './common.ts';
import type { Route } from '../route-types.ts';

export const LIST_ORDERS = {
  operationId: 'listOrders',
  method: 'GET',
  does: 'reads',
  path: '/store/orders',
  summary: 'List store orders (contract not yet specified)',
  request: {},
  sample: {},
  errors: [
    {
      status: 501,
      description: 'The operation exists but its contract is not specified yet.',
      codes: ['not_implemented'],
    },
  ],
  access: { tables: [LIMITER_GRANT] },
  notImplemented: true,
} as const satisfies Route;

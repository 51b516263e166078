/**
 * What each function may touch: exactly the DynamoDB actions its storage adapters call (lambdas/storage/*), on
 * exactly the tables and indexes involved. The stack grants these and nothing else.
 */
import { KEYS_TABLE, PETS_TABLE, STATE_TABLE, type TableDefinition } from '../../contract/tables.ts';

export interface TableGrant {
  readonly table: TableDefinition;
  /** A GSI name: the grant applies to `<table arn>/index/<name>` instead of the table. */
  readonly index?: string;
  readonly actions: readonly string[];
}

export interface FunctionAccess {
  readonly tables: readonly TableGrant[];
  /** Receives the pagination-cursor signing key as CURSOR_SECRET. */
  readonly cursorSecret?: boolean;
}

/** Every operation runs the rate limiter: conditional UpdateItem on its window item (limit-store.ts). */
const RATE_LIMITER: TableGrant = { table: STATE_TABLE, actions: ['dynamodb:UpdateItem'] };

/** By operationId (contract/routes.ts), plus `authorizer`. */
export const FUNCTION_ACCESS: Readonly<Record<string, FunctionAccess>> = {
  authorizer: { tables: [{ table: KEYS_TABLE, actions: ['dynamodb:GetItem'] }] },
  listPets: {
    tables: [
      RATE_LIMITER,
      { table: PETS_TABLE, actions: ['dynamodb:Scan'] },
      { table: PETS_TABLE, index: PETS_TABLE.indexes[0].indexName, actions: ['dynamodb:Query'] },
    ],
    cursorSecret: true,
  },
  // PutItem of the pet (also inside the idempotent-create transaction); the id-block counter and the transaction's
  // record update are UpdateItems on the state table, like the limiter's; an Idempotency-Key is claimed with a
  // conditional PutItem and released with a DeleteItem (idempotency-store.ts).
  createPet: {
    tables: [
      RATE_LIMITER,
      { table: PETS_TABLE, actions: ['dynamodb:PutItem'] },
      { table: STATE_TABLE, actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'] },
    ],
  },
  getPet: { tables: [RATE_LIMITER, { table: PETS_TABLE, actions: ['dynamodb:GetItem'] }] },
  listOrders: { tables: [RATE_LIMITER] },
};

export function accessOf(name: string): FunctionAccess {
  const access = FUNCTION_ACCESS[name];
  if (!access) throw new Error(`No access declared for function ${name} (lib/stacks/function-access.ts)`);
  return access;
}

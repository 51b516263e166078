/**
 * What each function may touch, by function name (an operationId, or `authorizer`): read off the route table, where
 * each operation declares exactly the DynamoDB actions its storage adapters call. The stack grants these and nothing
 * else.
 */
import { AUTHORIZER, ROUTES, type FunctionAccess } from '../../contract/routes.ts';

export type { FunctionAccess, TableGrant } from '../../contract/routes.ts';

export const FUNCTION_ACCESS: Readonly<Record<string, FunctionAccess>> = {
  [AUTHORIZER.name]: AUTHORIZER.access,
  ...Object.fromEntries(ROUTES.map((r) => [r.operationId, r.access])),
};

export function accessOf(name: string): FunctionAccess {
  const access = FUNCTION_ACCESS[name];
  if (!access) throw new Error(`No access declared for function ${name} (contract/routes.ts)`);
  return access;
}

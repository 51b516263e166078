/**
 * The functions of a stage and what each may touch, by function name (an operationId, or `authorizer`): read off
 * the route table, where each operation declares exactly the DynamoDB actions its storage adapters call. The stack
 * grants these and nothing else; the alarms watch what they allow; the tests and docs derive from the same.
 * Plain data, no CDK imports (the docs generator reads it).
 */
import { AUTHORIZER, ROUTES, type FunctionAccess, type Route } from '../../contract/routes.ts';
import { DYNAMODB_OPERATIONS, tablesOf, type TableDefinition } from '../../contract/tables.ts';

export type { FunctionAccess, TableGrant } from '../../contract/routes.ts';

/** Every function's access, by function name: the routes' in the route table's order, then the authorizer's. */
export const functionAccess = (routes: readonly Route[] = ROUTES): Readonly<Record<string, FunctionAccess>> => ({
  [AUTHORIZER.name]: AUTHORIZER.access,
  ...Object.fromEntries(routes.map((r) => [r.operationId, r.access])),
});

export const FUNCTION_ACCESS = functionAccess();

/**
 * The table variables of a function's environment: only the tables its access names, each to its physical name
 * (`name(def)`): least privilege, and a function's configuration says which tables it touches.
 */
export const tableEnvironment = (
  access: FunctionAccess,
  name: (def: TableDefinition) => string,
): Record<string, string> => Object.fromEntries(tablesOf(access.tables).map((def) => [def.envVar, name(def)]));

export function accessOf(name: string): FunctionAccess {
  const access = FUNCTION_ACCESS[name];
  if (!access) throw new Error(`No access declared for function ${name} (contract/routes.ts)`);
  return access;
}

/** The construct id of a function (`getPet` → `GetPet`); its log group's pinned logical id is this + `Logs`. */
export const functionConstructId = (name: string): string => `${name[0]!.toUpperCase()}${name.slice(1)}`;

/**
 * What the functions may do to each table (by definition id), in DYNAMODB_OPERATIONS order: the actions granted on
 * it or its indexes, plus TransactWriteItems on a table a grant declares `transactional` (a transaction's writes are
 * reported under that operation). Only tables some function touches appear.
 */
export function tableOperations(routes: readonly Route[] = ROUTES): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const access of Object.values(functionAccess(routes)))
    for (const grant of access.tables) {
      const ops = out.get(grant.table.id) ?? new Set<string>();
      for (const action of grant.actions) {
        const op = action.slice('dynamodb:'.length);
        ops.add(op);
      }
      if (grant.transactional) ops.add('TransactWriteItems');
      out.set(grant.table.id, ops);
    }
  return new Map([...out].map(([id, ops]) => [id, DYNAMODB_OPERATIONS.filter((op) => ops.has(op))]));
}

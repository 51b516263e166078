/**
 * Which operations read each index, from the route table (every operation's and the authorizer's table access: the
 * grants its role gets), by the logical id the stack gives the table: what the index rules need to tell a release
 * that creates an index and ships its reader at once.
 */
import type { FunctionAccess } from '../../contract/route-types.ts';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { tableLogicalIdOf } from '../constructs/data-tables.ts';
import type { IndexReaders } from './index-rules.ts';

export const declaredIndexReaders: IndexReaders = (tableLogicalId, indexName) =>
  [
    ...ROUTES.map((r) => ({ name: r.operationId, access: r.access as FunctionAccess })),
    { name: AUTHORIZER.name, access: AUTHORIZER.access as FunctionAccess },
  ].flatMap((f) =>
    f.access.tables.some((g) => g.index === indexName && tableLogicalIdOf(g.table) === tableLogicalId) ? [f.name] : [],
  );

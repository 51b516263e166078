/**
 * The declarations' tables, indexes and operations as the infrastructure tests pick them: each test that needs "a
 * table with an index" or "an operation that reads an index" takes one here, from contract/tables.ts and the route
 * table, and names it by its derived logical id, so no test holds today's names (test/unit/infra-names.test.ts
 * fails on one written out). Each lookup throws when the declarations no longer hold what a test needs.
 */
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { TABLES, type IndexDefinition, type TableDefinition } from '../../contract/tables.ts';
import { liveAliasLogicalId } from '../../lib/constructs/api-function.ts';
import { tableLogicalIdOf } from '../../lib/constructs/data-tables.ts';
import { functionConstructId } from '../../lib/stacks/function-access.ts';

/** A table with its logical id in the stack's template. */
export interface DeclaredTable {
  readonly def: TableDefinition;
  readonly logicalId: string;
}

/** One global secondary index, with its table. */
export interface DeclaredIndex extends DeclaredTable {
  readonly index: IndexDefinition;
}

const need = <T>(what: string, found: T | undefined): T => {
  if (found === undefined) throw new Error(`The declarations (contract/tables.ts, contract/routes.ts) hold no ${what}`);
  return found;
};

export const declaredTable = (def: TableDefinition): DeclaredTable => ({ def, logicalId: tableLogicalIdOf(def) });

/** Every index of every table, in declaration order. */
export const declaredIndexes = (): DeclaredIndex[] =>
  TABLES.flatMap((def) => def.indexes.map((index) => ({ ...declaredTable(def), index })));

/** Regular-expression text matching `s` literally. */
export const literally = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A table with at least `n` indexes. */
export const tableWithIndexes = (n: number, except: readonly TableDefinition[] = []): DeclaredTable =>
  declaredTable(
    need(
      `table with ${n} indexes`,
      TABLES.find((t) => t.indexes.length >= n && !except.includes(t)),
    ),
  );

/** An index with a sort key (its key schema has two parts), on a table other than `except`'s. */
export const indexWithSortKey = (except: readonly TableDefinition[] = []): DeclaredIndex =>
  need(
    'index with a sort key',
    declaredIndexes().find((i) => i.index.sortKey && !except.includes(i.def)),
  );

/** An index some operation's access reads, with the functions that read it (the route table's order, then the authorizer). */
export const indexReadByAnOperation = (): DeclaredIndex & { readonly readers: readonly string[] } => {
  const functions = [...ROUTES.map((r) => ({ name: r.operationId, access: r.access })), AUTHORIZER];
  const readersOf = (i: DeclaredIndex) =>
    functions
      .filter((f) =>
        f.access.tables.some((g) => g.table.id === i.def.id && 'index' in g && g.index === i.index.indexName),
      )
      .map((f) => f.name);
  const i = need(
    'index an operation reads',
    declaredIndexes().find((x) => readersOf(x).length > 0),
  );
  return { ...i, readers: readersOf(i) };
};

/** An operation's function as the stack builds it: its construct id and its `live` alias's pinned logical id. */
export const operationFunction = (operationId: string = ROUTES[0]!.operationId) => {
  const constructId = functionConstructId(operationId);
  return { operationId, constructId, aliasId: liveAliasLogicalId(constructId) };
};

/**
 * A list on an index takes its pages from the table's declaration (lambdas/storage/item-store.ts, indexPages): an
 * index the table does not declare, or one whose pages a page key (the item's id) cannot resume, is refused when the
 * store is made, naming the table and the index, before any request reaches DynamoDB.
 */
import { describe, expect, it } from 'vitest';
import type { Storage } from '../../lambdas/storage/client.ts';
import { indexPages, type ItemTable } from '../../lambdas/storage/item-store.ts';
import { PETS_TABLE, type TableDefinition } from '../../contract/tables.ts';

const storage = { tables: { pets: 'pets' }, doc: {} } as unknown as Storage;
const table = (def: TableDefinition): ItemTable<object> => ({
  def: def as ItemTable<object>['def'],
  fromItem: (i) => i,
});

describe('indexPages', () => {
  it('takes every index of the declaration sorted by the id', () => {
    for (const i of PETS_TABLE.indexes)
      expect(typeof indexPages(storage, table(PETS_TABLE), i.indexName)).toBe('function');
  });

  it('refuses an index the table does not declare, naming both', () => {
    expect(() => indexPages(storage, table(PETS_TABLE), 'byOwner')).toThrow('Pets declares no index byOwner');
  });

  it('refuses an index not sorted by the id, whose pages a page key could not resume', () => {
    const def = {
      ...PETS_TABLE,
      indexes: [
        { indexName: 'byName', partitionKey: { name: 'name', type: 'S' }, sortKey: { name: 'name', type: 'S' } },
      ],
    } satisfies TableDefinition;
    expect(() => indexPages(storage, table(def), 'byName')).toThrow('Pets index byName is not sorted by id');
  });
});

/**
 * The DynamoDB adapter for pets: how a pet is stored, and its list queries. The create, the read by id and the id
 * allocator are the shared ones (item-store.ts).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { IdAllocator } from '../domain/records.ts';
import { petOf, type PageKey, type PetPage, type PetStore } from '../domain/pets.ts';
import type { Pet, PetStatus } from '../../contract/schemas.ts';
import { guarded, type Storage } from './client.ts';
import { indexPages, itemStore, itemWriter, tableIdAllocator, type ItemTable } from './item-store.ts';
import { PETS_TABLE } from '../../contract/tables.ts';

// The stored item is the pet with its audit and write token: the Pet schema's fields are what the API shows of it.
const PETS: ItemTable<Pet> = { def: PETS_TABLE, fromItem: petOf };
const toPet = PETS.fromItem;

/** The list: a Scan with Limit, or with a status the byStatus index's pages. */
function lister(storage: Storage): PetStore['list'] {
  const byStatus = indexPages(storage, PETS, PETS_TABLE.indexes[0].indexName);
  const { doc, tables } = storage;
  return async ({ limit, status, after }: { limit: number; status?: PetStatus; after?: PageKey }): Promise<PetPage> => {
    if (status) {
      const { items, next } = await byStatus(status, { limit, after });
      return next ? { pets: items, next } : { pets: items };
    }
    // No FilterExpression: every item read is an item returned, so pages are full.
    const out = await guarded((options) =>
      doc.send(
        new ScanCommand({
          TableName: tables.pets,
          Limit: limit,
          ...(after ? { ExclusiveStartKey: { id: after.id } } : {}),
        }),
        options,
      ),
    );
    const pets = (out.Items ?? []).map(toPet);
    const last = out.LastEvaluatedKey;
    return last ? { pets, next: { id: Number(last.id) } } : { pets };
  };
}

/** The create's part alone: a create never reads, and its bundle then carries none of the read commands. */
export function createPetWriter(storage: Storage): Pick<PetStore, 'insert'> {
  return itemWriter(storage, PETS);
}

export function createPetStore(storage: Storage): PetStore {
  return { ...itemStore(storage, PETS), list: lister(storage) };
}

/** The pets' id allocator: its counter is `ids#pets` in the state table. */
export const createIdAllocator = (storage: Storage): IdAllocator => tableIdAllocator(storage, PETS_TABLE);

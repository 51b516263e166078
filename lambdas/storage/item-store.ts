/**
 * What every store of service-assigned ids shares (pet-store.ts and any new one): the create as a conditional put
 * with a write token, the read by id, an index's pages and the id allocator. A store adds its mapping and queries.
 */
import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PageKey } from '../domain/pagination.ts';
import type { Audit, IdAllocator, ItemWriter } from '../domain/records.ts';
import { tableKey, type TableDefinition, type TableKey } from '../../contract/tables.ts';
import { conditionFailedItem, guarded, withinDeadline, type Storage } from './client.ts';

/** The attribute holding the token of the write that created an item (never part of what the API shows). */
export const WRITE_TOKEN = 'wt';

/** A table of items keyed by a numeric id (its partition key), and how an item of it reads as the API's value. */
export interface ItemTable<T> {
  readonly def: TableDefinition & { readonly envVar: `${string}_TABLE_NAME` };
  /** The API's value from a stored item (audit and write token left out). */
  readonly fromItem: (item: Record<string, unknown>) => T;
}

const nameOf = (storage: Storage, def: TableDefinition): string => storage.tables[tableKey(def) as TableKey];

/**
 * Write tokens: this container's random prefix (72 bits, drawn at its first create) and a counter.
 * They are unique per attempt across containers, without a call to the system's random source on each create.
 */
let tokenPrefix: string | undefined;
let tokenCount = 0;
const nextWriteToken = () => `${(tokenPrefix ??= randomBytes(9).toString('base64url'))}${(tokenCount++).toString(36)}`;

/** The create: a put conditional on the id being free. */
export function itemWriter<T extends object>(storage: Storage, { def }: ItemTable<T>): ItemWriter<T> {
  const key = def.partitionKey.name;
  // Once per writer, not per put: the name is fixed for the container's life.
  const table = nameOf(storage, def);
  return {
    async insert(item, audit: Audit) {
      // A token per attempt, written with the item. If the SDK resends a put whose first copy was applied, the resend
      // fails its condition on our own item. The token tells that from a taken id, so a create never writes twice.
      const token = nextWriteToken();
      try {
        await guarded((options) =>
          storage.doc.send(
            new PutCommand({
              TableName: table,
              Item: { ...item, ...audit, [WRITE_TOKEN]: token },
              ConditionExpression: 'attribute_not_exists(#k)',
              ExpressionAttributeNames: { '#k': key },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
            options,
          ),
        );
        return true;
      } catch (err) {
        if (err instanceof ConditionalCheckFailedException) return conditionFailedItem(err)?.[WRITE_TOKEN] === token;
        throw err;
      }
    },
  };
}

/** The read of one item by its id; undefined when none has it. */
export function itemReader<T>(
  storage: Storage,
  { def, fromItem }: ItemTable<T>,
): (id: number) => Promise<T | undefined> {
  const key = def.partitionKey.name;
  const table = nameOf(storage, def);
  return async (id) => {
    const out = await guarded((options) =>
      storage.doc.send(new GetCommand({ TableName: table, Key: { [key]: id } }), options),
    );
    return out.Item ? fromItem(out.Item) : undefined;
  };
}

/** A resource's store: the create and the read by id (a store of its own adds its queries to these). */
export function itemStore<T extends object>(
  storage: Storage,
  table: ItemTable<T>,
): ItemWriter<T> & { get(id: number): Promise<T | undefined> } {
  return { ...itemWriter(storage, table), get: itemReader(storage, table) };
}

/** A page of items and, when a further page may exist, where it starts. */
export interface ItemPage<T> {
  readonly items: T[];
  readonly next?: PageKey;
}

/**
 * The pages of one value of an index sorted by the items' id (`byStatus`, or a relation index like `(shelterId, id)`).
 * A Query with `Limit` and no filter returns full pages. Its `ExclusiveStartKey` is the page key's item key plus the
 * index key, both known from the declaration. The index is checked when the store is made, so a wrong one fails at
 * once, not on the first request.
 */
export function indexPages<T>(
  storage: Storage,
  { def, fromItem }: ItemTable<T>,
  indexName: string,
): (value: string | number, page: { readonly limit: number; readonly after?: PageKey }) => Promise<ItemPage<T>> {
  const index = def.indexes.find((i) => i.indexName === indexName);
  const id = def.partitionKey.name;
  if (!index) throw new Error(`${def.id} declares no index ${indexName} (contract/tables.ts)`);
  if (index.sortKey?.name !== id)
    throw new Error(`${def.id} index ${indexName} is not sorted by ${id}: a page key carries the id alone`);
  const key = index.partitionKey.name;
  const table = nameOf(storage, def);
  return async (value, { limit, after }) => {
    const out = await guarded((options) =>
      storage.doc.send(
        new QueryCommand({
          TableName: table,
          IndexName: indexName,
          KeyConditionExpression: '#k = :v',
          ExpressionAttributeNames: { '#k': key },
          ExpressionAttributeValues: { ':v': value },
          Limit: limit,
          ...(after ? { ExclusiveStartKey: { [id]: after.id, [key]: value } } : {}),
        }),
        options,
      ),
    );
    const items = (out.Items ?? []).map(fromItem);
    const last = out.LastEvaluatedKey;
    return last ? { items, next: { id: Number(last[id]) } } : { items };
  };
}

/** Ids are reserved in blocks of this size with one atomic counter update: ~1/ID_BLOCK extra writes per create. */
export const ID_BLOCK = 1000;

/** The state-table item counting a table's reserved ids: `ids#pets`. */
export const idCounterKey = (def: Pick<TableDefinition, 'envVar'>): string => `ids#${tableKey(def)}`;

/**
 * Reserves id blocks with an atomic `ADD` on one counter item (idCounterKey), then hands ids out of the block in
 * memory. The counter takes one write per ID_BLOCK creates, so it never becomes the hot item; blocks never overlap,
 * so ids are unique across every container. Ids a container does not use are skipped, never reused.
 */
export function idAllocator({ doc, tables }: Storage, counterKey: string): IdAllocator {
  let nextId = 0;
  let end = -1; // inclusive
  let pending: Promise<void> | undefined;
  /** The reservation in flight was started ahead of any request (reserveAhead): no request's deadline bounds it. */
  let ahead = false;

  async function reserve(): Promise<void> {
    const out = await guarded((options) =>
      doc.send(
        new UpdateCommand({
          TableName: tables.state,
          Key: { pk: counterKey },
          UpdateExpression: 'ADD #n :block',
          ExpressionAttributeNames: { '#n': 'allocated' },
          ExpressionAttributeValues: { ':block': ID_BLOCK },
          ReturnValues: 'UPDATED_NEW',
        }),
        options,
      ),
    );
    const top = Number(out.Attributes?.allocated);
    if (!Number.isSafeInteger(top)) throw new Error('id counter is not a safe integer');
    nextId = top - ID_BLOCK + 1;
    end = top;
  }

  return {
    reserveAhead() {
      if (nextId <= end || pending) return;
      ahead = true;
      // A failure is forgotten: the next id reserves again, within its request's deadline.
      pending = reserve()
        .catch(() => undefined)
        .finally(() => {
          pending = undefined;
          ahead = false;
        });
    },
    async next() {
      while (nextId > end) {
        if (pending && ahead) {
          await withinDeadline(pending);
          continue;
        }
        pending ??= reserve().finally(() => (pending = undefined));
        await pending;
      }
      return nextId++;
    },
  };
}

/** The id allocator of a table's items: its counter is idCounterKey(def) in the state table. */
export const tableIdAllocator = (storage: Storage, def: Pick<TableDefinition, 'envVar'>): IdAllocator =>
  idAllocator(storage, idCounterKey(def));

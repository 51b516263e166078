/**
 * The DynamoDB adapter for pets and pet ids.
 */
import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { IdAllocator, PageKey, PetAudit, PetPage, PetStore } from '../domain/pets.ts';
import type { Pet, PetStatus } from '../../contract/schemas.ts';
import { conditionFailedItem, guarded, withStorage, withinDeadline, type Storage } from './client.ts';
import { PETS_TABLE } from '../../contract/tables.ts';

const STATUS_INDEX = PETS_TABLE.indexes[0].indexName;
/** The attribute holding the token of the write that created a pet (never part of the Pet the API shows). */
export const WRITE_TOKEN = 'wt';

function toPet(item: Record<string, unknown>): Pet {
  return {
    id: item.id as number,
    name: item.name as string,
    categoryId: item.categoryId as number,
    status: item.status as Pet['status'],
  };
}

async function insert(storage: Storage, pet: Pet, audit: PetAudit): Promise<boolean> {
  const { doc, tables } = storage;
  // A token per attempt, written with the pet: when the SDK resends a put whose answer was lost and the first copy
  // was applied, the resent copy fails its condition on our own item; the token tells it apart from an id that
  // is really taken, so one create never writes a second pet under a new id.
  const token = randomBytes(9).toString('base64url');
  try {
    await guarded((options) =>
      doc.send(
        new PutCommand({
          TableName: tables.pets,
          Item: { ...pet, ...audit, [WRITE_TOKEN]: token },
          ConditionExpression: 'attribute_not_exists(id)',
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
}

async function get(storage: Storage, id: number): Promise<Pet | undefined> {
  const { doc, tables } = storage;
  const out = await guarded((options) => doc.send(new GetCommand({ TableName: tables.pets, Key: { id } }), options));
  return out.Item ? toPet(out.Item) : undefined;
}

async function list(
  storage: Storage,
  { limit, status, after }: { limit: number; status?: PetStatus; after?: PageKey },
): Promise<PetPage> {
  const { doc, tables } = storage;
  // No FilterExpression anywhere: every item read is an item returned, so pages are full.
  const out = await guarded((options) =>
    status
      ? doc.send(
          new QueryCommand({
            TableName: tables.pets,
            IndexName: STATUS_INDEX,
            KeyConditionExpression: '#s = :s',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':s': status },
            Limit: limit,
            ...(after ? { ExclusiveStartKey: { id: after.id, status } } : {}),
          }),
          options,
        )
      : doc.send(
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
}

/** The create's part alone: a create never reads, and its bundle then carries none of the read commands. */
export function createPetWriter(storage: Storage): Pick<PetStore, 'insert'> {
  return { insert: withStorage(storage, insert) };
}

export function createPetStore(storage: Storage): PetStore {
  return {
    insert: withStorage(storage, insert),
    get: withStorage(storage, get),
    list: withStorage(storage, list),
  };
}

/** Ids are reserved in blocks of this size with one atomic counter update: ~1/ID_BLOCK extra writes per create. */
export const ID_BLOCK = 1000;

/**
 * Reserves id blocks with an atomic `ADD` on one counter item, then hands ids out of the block in memory. The
 * counter takes one write per ID_BLOCK creates, so it never becomes the hot item; blocks never overlap, so ids
 * are unique across every container. Ids a container does not use are skipped, never reused.
 */
export function createIdAllocator({ doc, tables }: Storage, counterKey = 'ids#pets'): IdAllocator {
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

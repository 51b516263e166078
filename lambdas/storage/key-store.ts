/**
 * The DynamoDB adapter for API keys (the authorizer's lookup, and the admin tool's records).
 */
import { GetCommand, PutCommand, QueryCommand, ScanCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { KeyRecord, KeyStore } from '../domain/keys.ts';
import { doc, guarded, tableNames } from './client.ts';
import { KEYS_TABLE } from '../../contract/tables.ts';

const BY_KEY_ID = KEYS_TABLE.indexes[0].indexName;

export const dynamoKeyStore: KeyStore = {
  async getByHash(hash) {
    const out = await guarded(() =>
      doc.send(new GetCommand({ TableName: tableNames.keys, Key: { hash }, ConsistentRead: true })),
    );
    return out.Item as KeyRecord | undefined;
  },
};

/** Admin operations on key records. */
export const keyAdminStore = {
  async put(record: KeyRecord): Promise<void> {
    await guarded(() =>
      doc.send(
        new PutCommand({ TableName: tableNames.keys, Item: record, ConditionExpression: 'attribute_not_exists(#h)', ExpressionAttributeNames: { '#h': 'hash' } }),
      ),
    );
  },

  /** Upserts a record (local development keys given by ANIMAL_STORE_DEV_KEYS). */
  async upsert(record: KeyRecord): Promise<void> {
    await guarded(() => doc.send(new PutCommand({ TableName: tableNames.keys, Item: record })));
  },

  async getById(keyId: string): Promise<KeyRecord | undefined> {
    const out = await guarded(() =>
      doc.send(
        new QueryCommand({
          TableName: tableNames.keys,
          IndexName: BY_KEY_ID,
          KeyConditionExpression: 'keyId = :k',
          ExpressionAttributeValues: { ':k': keyId },
        }),
      ),
    );
    // The index is eventually consistent: re-read the record by its hash to see its latest state.
    const hash = (out.Items?.[0] as KeyRecord | undefined)?.hash;
    return hash ? dynamoKeyStore.getByHash(hash) : undefined;
  },

  async list(): Promise<KeyRecord[]> {
    const items: KeyRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await guarded(() =>
        doc.send(new ScanCommand({ TableName: tableNames.keys, ...(start ? { ExclusiveStartKey: start } : {}) })),
      );
      items.push(...((out.Items ?? []) as KeyRecord[]));
      start = out.LastEvaluatedKey;
    } while (start);
    return items.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  },

  async update(hash: string, changes: Partial<Omit<KeyRecord, 'hash' | 'keyId'>>, remove: string[] = []): Promise<KeyRecord> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets = Object.entries(changes)
      .filter(([, v]) => v !== undefined)
      .map(([k, v], i) => {
        names[`#a${i}`] = k;
        values[`:v${i}`] = v;
        return `#a${i} = :v${i}`;
      });
    const removes = remove.map((k, i) => {
      names[`#r${i}`] = k;
      return `#r${i}`;
    });
    const expr = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '']
      .filter(Boolean)
      .join(' ');
    names['#h'] = 'hash';
    const out = await guarded(() =>
      doc.send(
        new UpdateCommand({
          TableName: tableNames.keys,
          Key: { hash },
          UpdateExpression: expr,
          ConditionExpression: 'attribute_exists(#h)',
          ExpressionAttributeNames: names,
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return out.Attributes as KeyRecord;
  },

  /** Replaces a record's hash (rotation) in one transaction: the old secret stops working as the new one starts. */
  async replaceHash(oldHash: string, next: KeyRecord): Promise<void> {
    await guarded(() =>
      doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: tableNames.keys, Key: { hash: oldHash }, ConditionExpression: 'attribute_exists(#h)', ExpressionAttributeNames: { '#h': 'hash' } } },
            { Put: { TableName: tableNames.keys, Item: next, ConditionExpression: 'attribute_not_exists(#h)', ExpressionAttributeNames: { '#h': 'hash' } } },
          ],
        }),
      ),
    );
  },
};

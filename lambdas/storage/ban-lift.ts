/**
 * Lifts a key's ban (the admin tool's `keys unban`): the ban end on every counter item of the days a ban can span
 * (today and tomorrow, every shard a key can have), and the 429s counted towards a new one in the last minutes, so
 * the next refused request does not ban the key again at once. The key's standing at the gateway is the key
 * store's (clearStanding). Each write is idempotent and creates nothing: an item that is not there stays absent.
 */
import { UpdateCommand, DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { windowsAt } from '../domain/rate-limit.ts';
import { guarded, type Storage } from './client.ts';
import { MAX_SHARDS } from './limit-store.ts';
import { rejectionKey, shardKey } from './limiter-items.ts';

/** Minutes of 429s forgotten with a ban (the ban counts a minute window's 429s). */
const REJECTION_MINUTES = 2;

export async function liftBan(storage: Storage, subject: string, nowMs: number): Promise<void> {
  const w = windowsAt(nowMs);
  const table = storage.tables.state;
  const writes: Array<Promise<unknown>> = [];
  for (const day of [w.dayStart, w.dayStart + 86_400])
    for (let shard = 0; shard < MAX_SHARDS; shard++)
      writes.push(
        guarded((options) =>
          storage.doc.send(
            new UpdateCommand({
              TableName: table,
              Key: shardKey(subject, day, shard),
              UpdateExpression: 'REMOVE banUntil',
              ConditionExpression: 'attribute_exists(banUntil)',
            }),
            options,
          ),
        ).catch((err: unknown) => {
          if ((err as Error)?.name !== 'ConditionalCheckFailedException') throw err;
        }),
      );
  for (let i = 0; i < REJECTION_MINUTES; i++)
    writes.push(
      guarded((options) =>
        storage.doc.send(
          new DeleteCommand({ TableName: table, Key: rejectionKey(subject, w.minuteStart - 60 * i) }),
          options,
        ),
      ),
    );
  await Promise.all(writes);
}

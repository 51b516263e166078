/**
 * What the admin tool's reconcile reads and writes of a key's standing at the gateway (standing.ts) and of its day
 * counters: each write idempotent, so a reconcile that stopped part-way is finished by running it again.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Standing } from '../domain/keys.ts';
import { windowsAt } from '../domain/rate-limit.ts';
import { guarded, type Storage } from './client.ts';
import { MAX_SHARDS } from './limit-store.ts';
import { shardKey } from './limiter-items.ts';
import { noteStanding, standingKey, standingOf, type StandingItem, type StandingNote } from './standing.ts';

/** The key's standing as the authorizer reads it (consistently). */
export async function readStanding({ doc, tables }: Storage, hash: string): Promise<Standing> {
  const out = await guarded(() =>
    doc.send(new GetCommand({ TableName: tables.state, Key: standingKey(hash), ConsistentRead: true })),
  );
  return standingOf(out.Item as StandingItem | undefined);
}

/**
 * Forgets part of a key's standing: its spent day, or its ban (only the one that ends at `banUntil`: a newer ban a
 * function wrote meanwhile stays) with the mark of whose it was. Removing what is not there is no error.
 */
export async function clearStandingPart(
  { doc, tables }: Storage,
  hash: string,
  part: { spentDay: number } | { banUntil: number },
): Promise<void> {
  const spent = 'spentDay' in part;
  await guarded(() =>
    doc.send(
      new UpdateCommand({
        TableName: tables.state,
        Key: standingKey(hash),
        UpdateExpression: spent ? 'REMOVE spentDay' : 'REMOVE banUntil, adminBanUntil',
        ConditionExpression: spent ? 'spentDay = :v' : 'banUntil = :v',
        ExpressionAttributeValues: { ':v': spent ? part.spentDay : part.banUntil },
      }),
    ),
  ).catch((err: unknown) => {
    // Already gone, or another value written meanwhile (a function's newer decision): nothing of ours to remove.
    if ((err as Error)?.name !== 'ConditionalCheckFailedException') throw err;
  });
}

/**
 * Today's day counts of a key back to 0 on every shard it can have (an admin lifted its spent day). An item that is
 * not there stays absent; doing it twice only starts the day again from the second time.
 */
export async function liftDay(storage: Storage, subject: string, nowMs: number): Promise<void> {
  const { dayStart } = windowsAt(nowMs);
  await Promise.all(
    Array.from({ length: MAX_SHARDS }, (_, shard) =>
      guarded(() =>
        storage.doc.send(
          new UpdateCommand({
            TableName: storage.tables.state,
            Key: shardKey(subject, dayStart, shard),
            UpdateExpression: 'SET d = :zero',
            ConditionExpression: 'attribute_exists(d) AND d > :zero',
            ExpressionAttributeValues: { ':zero': 0 },
          }),
        ),
      ).catch((err: unknown) => {
        if ((err as Error)?.name !== 'ConditionalCheckFailedException') throw err;
      }),
    ),
  );
}

/**
 * Today's bans of a key back to `bans` (countBan's count on its first shard's day item), when an admin's own mistake
 * caused the ones after (a plan change undone the same day): its next ban is as long as it would have been. Never
 * raises the count, and an item that is not there stays absent, so doing it twice is doing it once.
 */
export async function resetDayBans(storage: Storage, subject: string, dayStart: number, bans: number): Promise<void> {
  await guarded(() =>
    storage.doc.send(
      new UpdateCommand({
        TableName: storage.tables.state,
        Key: shardKey(subject, dayStart, 0),
        UpdateExpression: 'SET bans = :n',
        ConditionExpression: 'bans > :n',
        ExpressionAttributeValues: { ':n': bans },
      }),
    ),
  ).catch((err: unknown) => {
    if ((err as Error)?.name !== 'ConditionalCheckFailedException') throw err;
  });
}

/** The admin store's part for standing: bound to one storage. */
export function standingAdmin(storage: Storage) {
  return {
    readStanding: (hash: string) => readStanding(storage, hash),
    clearStandingPart: (hash: string, part: { spentDay: number } | { banUntil: number }) =>
      clearStandingPart(storage, hash, part),
    noteStanding: async (hash: string, note: StandingNote): Promise<void> => {
      await noteStanding(storage, hash, note);
    },
    liftDay: (subject: string, nowMs: number) => liftDay(storage, subject, nowMs),
    resetDayBans: (subject: string, dayStart: number, bans: number) => resetDayBans(storage, subject, dayStart, bans),
  };
}

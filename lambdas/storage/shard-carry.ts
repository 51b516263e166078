/**
 * Today's counts of a key follow a change of its limits. The limiter splits a key's budget over
 * ceil(perMinute / LIMITER.shardPerMinute) counter items, each holding its share of the day; when a change moves
 * that number (crossing 100,000/min), the counts sit on the old layout's items, and the limiter would read some of
 * them no more: a heavy key would start a fresh day (fewer shards), or be allowed its day again on the new, empty
 * items (more shards). The admin tool calls this right after the record changed: the day's total is spread over
 * the new layout as shardLimits splits the budget, each move one transaction (taken from one item only if it still
 * holds that much, added to another), so the total is never lost or doubled while functions keep counting; the
 * usage history gets the moved items' new day counts at this minute, so the chart's sum stays the day's count.
 *
 * A key's ban moves with it (it is on every shard's item). The minute window's count is not moved: at worst one
 * minute is counted per the old layout.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { limiterShards, type PlanLimits } from '../../contract/plans.ts';
import { windowsAt } from '../domain/rate-limit.ts';
import { guarded, type Storage } from './client.ts';
import { MAX_SHARDS } from './limit-store.ts';
import { KEEP_SECONDS, hourKey, shardKey } from './limiter-items.ts';

interface ShardItem {
  readonly d?: number;
  readonly banUntil?: number;
}

/** Rounds of read-and-move before giving up (each move that lost a race is read again). */
const ROUNDS = 4;

async function readDay(storage: Storage, subject: string, dayStart: number): Promise<ShardItem[]> {
  const table = storage.tables.state;
  const byPk = new Map<string, ShardItem>();
  let keys: Array<Record<string, unknown>> = Array.from({ length: MAX_SHARDS }, (_, s) =>
    shardKey(subject, dayStart, s),
  );
  for (let attempt = 0; keys.length && attempt < 5; attempt++) {
    const out = await guarded((options) =>
      storage.doc.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }),
        options,
      ),
    );
    for (const item of out.Responses?.[table] ?? []) byPk.set(String(item.pk), item as ShardItem);
    keys = (out.UnprocessedKeys?.[table]?.Keys as Array<Record<string, unknown>> | undefined) ?? [];
  }
  if (keys.length) throw new Error('counters unreadable (throttled)');
  return Array.from({ length: MAX_SHARDS }, (_, s) => byPk.get(shardKey(subject, dayStart, s).pk) ?? {});
}

/** Each shard's part of `total` in a layout of `n` shards, split as shardLimits splits a budget. */
const shares = (total: number, n: number) =>
  Array.from({ length: MAX_SHARDS }, (_, i) => (i < n ? Math.floor(total / n) + (i < total % n ? 1 : 0) : 0));

export async function carryCounts(
  storage: Storage,
  subject: string,
  from: PlanLimits,
  to: PlanLimits,
  nowMs: number,
): Promise<void> {
  const n = limiterShards(to);
  // Same layout: every count already sits where the limiter reads it (each shard's share scales with the limits).
  if (limiterShards(from) === n) return;
  const w = windowsAt(nowMs);
  const table = storage.tables.state;
  const touched = new Set<number>();
  for (let round = 0; round < ROUNDS; round++) {
    const items = await readDay(storage, subject, w.dayStart);
    const counts = items.map((i) => i.d ?? 0);
    const want = shares(
      counts.reduce((a, b) => a + b, 0),
      n,
    );
    const banUntil = Math.max(0, ...items.map((i) => i.banUntil ?? 0));
    const from_ = counts.map((c, i) => c - want[i]!);
    let raced = false;
    for (let src = 0; src < MAX_SHARDS; src++) {
      for (let dst = 0; dst < MAX_SHARDS && from_[src]! > 0; dst++) {
        if (from_[dst]! >= 0) continue;
        const x = Math.min(from_[src]!, -from_[dst]!);
        try {
          await guarded((options) =>
            storage.doc.send(
              new TransactWriteCommand({
                TransactItems: [
                  {
                    Update: {
                      TableName: table,
                      Key: shardKey(subject, w.dayStart, src),
                      UpdateExpression: 'ADD d :minus',
                      ConditionExpression: 'd >= :x',
                      ExpressionAttributeValues: { ':minus': -x, ':x': x },
                    },
                  },
                  {
                    Update: {
                      TableName: table,
                      Key: shardKey(subject, w.dayStart, dst),
                      UpdateExpression: 'ADD d :x SET expiresAt = if_not_exists(expiresAt, :exp)',
                      ExpressionAttributeValues: { ':x': x, ':exp': w.dayStart + KEEP_SECONDS },
                    },
                  },
                ],
              }),
              options,
            ),
          );
        } catch (err) {
          // The source gave some of it back meanwhile (a lease returned): read again and move what is there.
          if (err instanceof TransactionCanceledException || (err as Error)?.name === 'TransactionCanceledException') {
            raced = true;
            continue;
          }
          throw err;
        }
        from_[src]! -= x;
        from_[dst]! += x;
        touched.add(src).add(dst);
      }
    }
    if (banUntil > w.nowSec) await carryBan(storage, subject, w.dayStart, n, banUntil);
    if (!raced) break;
  }
  await recordMoves(storage, subject, w, [...touched]);
}

/** The ban on every item of the new layout (never shortened). */
async function carryBan(storage: Storage, subject: string, dayStart: number, n: number, banUntil: number) {
  await Promise.all(
    Array.from({ length: n }, (_, s) =>
      guarded((options) =>
        storage.doc.send(
          new UpdateCommand({
            TableName: storage.tables.state,
            Key: shardKey(subject, dayStart, s),
            UpdateExpression: 'SET banUntil = :b, expiresAt = if_not_exists(expiresAt, :exp)',
            ConditionExpression: 'attribute_not_exists(banUntil) OR banUntil < :b',
            ExpressionAttributeValues: { ':b': banUntil, ':exp': dayStart + KEEP_SECONDS },
          }),
          options,
        ),
      ).catch((err: unknown) => {
        if ((err as Error)?.name !== 'ConditionalCheckFailedException') throw err;
      }),
    ),
  );
}

/** The usage history's point at this minute for every item a move changed: its day count now. */
async function recordMoves(storage: Storage, subject: string, w: ReturnType<typeof windowsAt>, shards: number[]) {
  if (!shards.length) return;
  const items = await readDay(storage, subject, w.dayStart);
  const hourStart = w.minuteStart - (w.minuteStart % 3600);
  for (const s of shards)
    await guarded((options) =>
      storage.doc.send(
        new UpdateCommand({
          TableName: storage.tables.state,
          Key: hourKey(subject, hourStart, s),
          UpdateExpression: 'SET #m = :d, expiresAt = if_not_exists(expiresAt, :exp)',
          ExpressionAttributeNames: { '#m': `m${(w.minuteStart - hourStart) / 60}` },
          ExpressionAttributeValues: { ':d': items[s]!.d ?? 0, ':exp': w.dayStart + KEEP_SECONDS },
        }),
        options,
      ),
    );
}

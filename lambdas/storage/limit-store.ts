/**
 * Atomic rate-limit counting in DynamoDB. One item per subject per UTC day (`rl#<subject>#<dayStart>`) holds the
 * day count `d`, the current minute `ms` with its count `m`, a ban `banUntil`, and rejections `rj` in minute `rjm`.
 * Items are keyed by their window, so TTL (`expiresAt`) is housekeeping only.
 *
 * DynamoDB requests per checked call: 1 on the common path (a conditional UpdateItem), 2 on the first request of a
 * minute (the update that opens the new minute), 2-3 on a rejection (recording it towards the ban).
 * With N parallel requests on a fresh window exactly `perMinute` pass: every count is a conditional ADD.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { BAN_POLICY, type PlanLimits } from '../../contract/plans.ts';
import type { Consumption, LimitStore, Windows } from '../domain/rate-limit.ts';
import { conditionFailedItem, doc, guarded, tableNames } from './client.ts';

const KEEP_SECONDS = 2 * 86_400;
const key = (subject: string, dayStart: number) => ({ pk: `rl#${subject}#${dayStart}` });

type Item = { ms?: number; m?: number; d?: number; banUntil?: number; rj?: number; rjm?: number };

async function conditionalUpdate(
  input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'ReturnValuesOnConditionCheckFailure'>,
): Promise<{ ok: true; item: Item } | { ok: false; old: Item }> {
  try {
    const out = await guarded(() =>
      doc.send(
        new UpdateCommand({ ...input, TableName: tableNames.state, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' }),
      ),
    );
    return { ok: true, item: (out.Attributes ?? {}) as Item };
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return { ok: false, old: (conditionFailedItem(err) ?? {}) as Item };
    throw err;
  }
}

/** Counts a rejected request; the one that reaches the threshold bans the subject. */
async function recordRejection(subject: string, w: Windows): Promise<void> {
  const Key = key(subject, w.dayStart);
  let out = await conditionalUpdate({
    Key,
    UpdateExpression: 'ADD rj :one',
    ConditionExpression: 'rjm = :ms',
    ExpressionAttributeValues: { ':one': 1, ':ms': w.minuteStart },
    ReturnValues: 'UPDATED_NEW',
  });
  if (!out.ok) {
    out = await conditionalUpdate({
      Key,
      UpdateExpression: 'SET rjm = :ms, rj = :one',
      ConditionExpression: 'attribute_not_exists(rjm) OR rjm <> :ms',
      ExpressionAttributeValues: { ':one': 1, ':ms': w.minuteStart },
      ReturnValues: 'UPDATED_NEW',
    });
    if (!out.ok) return recordRejection(subject, w); // another request opened the minute first: count again
  }
  if (out.item.rj !== BAN_POLICY.rejectionsInWindow) return;
  const banUntil = w.nowSec + BAN_POLICY.banSeconds;
  // The ban lives in the day item(s) it covers, so it survives midnight.
  for (let day = w.dayStart; day < banUntil; day += 86_400) {
    await guarded(() =>
      doc.send(
        new UpdateCommand({
          TableName: tableNames.state,
          Key: key(subject, day),
          UpdateExpression: 'SET banUntil = :b, expiresAt = if_not_exists(expiresAt, :exp)',
          ExpressionAttributeValues: { ':b': banUntil, ':exp': day + KEEP_SECONDS },
        }),
      ),
    );
  }
}

export const dynamoLimitStore: LimitStore = {
  async consume(subject: string, limits: PlanLimits, w: Windows): Promise<Consumption> {
    const Key = key(subject, w.dayStart);
    const values = { ':one': 1, ':ms': w.minuteStart, ':dlim': limits.perDay, ':now': w.nowSec };
    const notBanned = '(attribute_not_exists(banUntil) OR banUntil <= :now)';
    for (let attempt = 0; attempt < 5; attempt++) {
      // Common path: the minute is open; count in both windows if both have room.
      const counted = await conditionalUpdate({
        Key,
        UpdateExpression: 'ADD m :one, d :one',
        ConditionExpression: `ms = :ms AND m < :mlim AND d < :dlim AND ${notBanned}`,
        ExpressionAttributeValues: { ...values, ':mlim': limits.perMinute },
        ReturnValues: 'UPDATED_NEW',
      });
      if (counted.ok) return { allowed: true, minuteCount: counted.item.m ?? 0, dayCount: counted.item.d ?? 0 };
      let old = counted.old;
      for (let step = 0; step < 5; step++) {
        if ((old.banUntil ?? 0) > w.nowSec) return { allowed: false, reason: 'banned', banUntil: old.banUntil! };
        if ((old.d ?? 0) >= limits.perDay) {
          await recordRejection(subject, w);
          return { allowed: false, reason: 'day', minuteCount: old.ms === w.minuteStart ? (old.m ?? 0) : 0, dayCount: old.d ?? 0 };
        }
        if (old.ms === w.minuteStart) {
          if ((old.m ?? 0) >= limits.perMinute) {
            await recordRejection(subject, w);
            return { allowed: false, reason: 'minute', minuteCount: old.m ?? 0, dayCount: old.d ?? 0 };
          }
          break; // the minute was opened meanwhile and has room: count on the common path
        }
        // First request of this minute (or of the day): open the minute with this request counted.
        const opened = await conditionalUpdate({
          Key,
          UpdateExpression: 'SET ms = :ms, m = :one, expiresAt = if_not_exists(expiresAt, :exp) ADD d :one',
          ConditionExpression: `(attribute_not_exists(ms) OR ms <> :ms) AND (attribute_not_exists(d) OR d < :dlim) AND ${notBanned}`,
          ExpressionAttributeValues: { ...values, ':exp': w.dayStart + KEEP_SECONDS },
          ReturnValues: 'UPDATED_NEW',
        });
        if (opened.ok) return { allowed: true, minuteCount: 1, dayCount: opened.item.d ?? 1 };
        old = opened.old;
      }
    }
    throw new Error('rate limiter did not settle after 5 attempts');
  },

  async usage(subject, w) {
    const out = await guarded(() =>
      doc.send(new GetCommand({ TableName: tableNames.state, Key: key(subject, w.dayStart), ConsistentRead: true })),
    );
    const item = (out.Item ?? {}) as Item;
    return {
      minuteCount: item.ms === w.minuteStart ? (item.m ?? 0) : 0,
      dayCount: item.d ?? 0,
      ...(item.banUntil && item.banUntil > w.nowSec ? { banUntil: item.banUntil } : {}),
    };
  },
};

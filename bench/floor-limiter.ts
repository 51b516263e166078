/**
 * The floors' limiter (bench/floor-server.ts, bench/floor-warm-handler.ts): the DynamoDB work the API's limiter does
 * per request, as directly as it can be done, on items of the floor's own (`rlfloor#`), so a floor never shares a
 * budget with the API:
 *   a key up to LIMITER.exactPerMinute (Free, Pro, Business): one conditional UpdateItem per request on the key's day
 *   item, opening the minute (plus its usage-history write) when the condition says it moved on;
 *   a larger key (Enterprise): a lease of the size the API takes (leaseSize), from a random shard, with the same
 *   conditional write, admitted locally until spent or LIMITER.leaseTtlMs old.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { LIMITER, limiterShards, shardLimits, type PlanLimits } from '../contract/plans.ts';
import { leaseCap, leaseSize, windowsAt, type Windows } from '../lambdas/domain/rate-limit.ts';

export type Caller = { keyId: string; limits: PlanLimits };

const NOT_BANNED = '(attribute_not_exists(banUntil) OR banUntil <= :now)';

/** Counts requests on `stateTable` through `doc`: `admit` is false only when a window is full. */
export function floorLimiter(doc: DynamoDBDocumentClient, stateTable: string) {
  const dayItem = (keyId: string, w: Windows, shard: number) => `rlfloor#${keyId}#${w.dayStart}#${shard}`;

  /**
   * Takes `n` from a shard's windows with the limiter's conditional write, as its `takeStep` does: counts in the
   * newest open minute, opens this request's minute when the stored one is older, and tries again when a concurrent
   * request moved the item first. False only when the window is full (the bench's keys never fill one).
   */
  async function take(pk: string, n: number, part: PlanLimits, w: Windows): Promise<boolean> {
    const values = { ':n': n, ':now': w.nowSec, ':dmax': part.perDay - n };
    let minute = w.minuteStart;
    let oldDay: number | undefined;
    for (let attempt = 0; attempt < 6; attempt++) {
      try {
        await doc.send(
          new UpdateCommand({
            TableName: stateTable,
            Key: { pk },
            UpdateExpression: 'ADD m :n, d :n',
            ConditionExpression: `ms = :ms AND m <= :mmax AND d <= :dmax AND ${NOT_BANNED}`,
            ExpressionAttributeValues: { ...values, ':ms': minute, ':mmax': part.perMinute - n },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return true;
      } catch (err) {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
        const old = err.Item ? unmarshall(err.Item) : {};
        oldDay = Number(old.d ?? 0);
        if (old.ms !== undefined && old.ms >= w.minuteStart) {
          if (old.ms === minute) return false; // full
          minute = old.ms as number; // a newer minute is open: count in it
          continue;
        }
      }
      // The usage history's write when a minute opens, beside the opening write (lambdas/storage/limit-store.ts).
      const history = doc
        .send(
          new UpdateCommand({
            TableName: stateTable,
            Key: { pk: `rlhfloor#${pk}#${w.minuteStart - (w.minuteStart % 3600)}` },
            UpdateExpression: 'SET #m = :d',
            ExpressionAttributeNames: { '#m': `m${(w.minuteStart % 3600) / 60}` },
            ExpressionAttributeValues: { ':d': (oldDay ?? 0) + n },
          }),
        )
        .catch(() => undefined);
      try {
        await doc.send(
          new UpdateCommand({
            TableName: stateTable,
            Key: { pk },
            UpdateExpression: 'SET ms = :ms, m = :n, expiresAt = if_not_exists(expiresAt, :exp) ADD d :n',
            ConditionExpression: `(attribute_not_exists(ms) OR ms < :ms) AND (attribute_not_exists(d) OR d <= :dmax) AND ${NOT_BANNED}`,
            ExpressionAttributeValues: { ...values, ':ms': w.minuteStart, ':exp': w.dayStart + 3 * 86_400 },
            ReturnValues: 'ALL_NEW',
          }),
        );
        await history;
        return true;
      } catch (err) {
        await history;
        // Another request opened it first: count in it.
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
        minute = w.minuteStart;
      }
    }
    return false;
  }

  type Lease = { left: number; granted: number; minuteStart: number; takenAtMs: number };
  /**
   * Per key, as the API's limiter keeps it: the lease in hand, the rate measured over the last one, and the take in
   * flight with the requests waiting for it (one take at a time per key, lambdas/domain/limiter.ts).
   */
  const leases = new Map<string, { lease?: Lease; rate: number; taking?: Promise<unknown>; waiting: number }>();

  const usable = (l: Lease | undefined, w: Windows): boolean =>
    !!l && l.left > 0 && l.minuteStart >= w.minuteStart && w.nowMs - l.takenAtMs < LIMITER.leaseTtlMs;

  /** Counts one request: exact keys with one write, larger ones from a lease (one write per lease). */
  async function admit({ keyId, limits }: Caller): Promise<boolean> {
    let w = windowsAt(Date.now());
    if (limits.perMinute <= LIMITER.exactPerMinute) return take(dayItem(keyId, w, 0), 1, limits, w);
    const st = leases.get(keyId) ?? { rate: 0, waiting: 0 };
    leases.set(keyId, st);
    // A take in flight brings this request's token too: wait for it, as the API's requests do.
    while (!usable(st.lease, w) && st.taking) {
      st.waiting++;
      await st.taking.finally(() => st.waiting--);
      w = windowsAt(Date.now());
    }
    const l = st.lease;
    if (l && usable(l, w)) {
      l.left--;
      return true;
    }
    if (l) st.rate = (l.granted - l.left) / Math.max(0.05, (w.nowMs - l.takenAtMs) / 1000);
    st.lease = undefined;
    const shard = Math.floor(Math.random() * limiterShards(limits));
    const part = shardLimits(limits, shard);
    // At least one token per waiting request, up to the API's cap on one lease (leaseCap).
    const want = Math.max(leaseSize(limits, part, st.rate, w), Math.min(st.waiting + 1, leaseCap(part)));
    const taking = take(dayItem(keyId, w, shard), want, part, w);
    st.taking = taking;
    try {
      if (!(await taking)) return false;
    } finally {
      st.taking = undefined;
    }
    st.lease = { left: want - 1, granted: want, minuteStart: w.minuteStart, takenAtMs: w.nowMs };
    return true;
  }

  return { admit };
}

/**
 * The limiter's counters in DynamoDB: the LimitCounters port of lambdas/domain/rate-limit.ts, which decides each
 * write; this module applies a write if its condition holds, or answers the item as it is. Each item is a few
 * numbers, under 1 KB at any rate, so every write is one write unit:
 * - `rl#<subject>#<dayStart>[#<shard>]`: per key shard and UTC day: the newest minute window `ms`, its count `m`,
 *   the day count `d`, a ban end `banUntil` (shard 0 also: the day's bans `bans`, last counted in window `bw`);
 * - `rlr#<subject>#<minuteStart>`: the 429s of one minute window `r`, for the ban;
 * - `rlh#<subject>#<hourStart>[#<shard>]`: the usage history (usage-history.ts).
 * Items are keyed by window, so TTL (`expiresAt`) is housekeeping. Counting writes never resend (Storage.once): a
 * lost answer may have been applied, so the caller gets a 503 and the count stands (under-admits, never over). A
 * throttling answer means not applied, so only those are retried here.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_LIMITER_SHARDS, limiterShards, type PlanLimits } from '../../contract/plans.ts';
import type {
  Attempt,
  CountingStep,
  LimitCounters,
  ShardState,
  TakeRequest,
  Usage,
  Windows,
} from '../domain/rate-limit.ts';
import { UnavailableError } from '../domain/errors.ts';
import { conditionFailedItem, guarded, type Storage } from './client.ts';
import { KEEP_SECONDS, rejectionKey, shardKey } from './limiter-items.ts';
import { recordMinuteOpen, type WarningLog } from './usage-history.ts';

/**
 * Answers that say the write was not applied (throttled, or never sent: refused connection, unknown host), so
 * sending it again cannot count twice.
 */
const NOT_APPLIED = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  // The counter was held by an admin's transaction: this write was refused whole.
  'TransactionConflictException',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const THROTTLE_RETRIES = 2;

type UpdateInput = Omit<
  ConstructorParameters<typeof UpdateCommand>[0],
  'TableName' | 'ReturnValuesOnConditionCheckFailure'
>;

/**
 * One write, sent once. A ValidationException (an item over 400 KB, say) cannot happen with these items; should it,
 * it is a 503 like an outage, never a 500.
 */
async function sendOnce(storage: Storage, input: UpdateInput): Promise<Record<string, unknown>> {
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await guarded((options) =>
        storage.once.doc.send(
          new UpdateCommand({
            ...input,
            TableName: storage.tables.state,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
          options,
        ),
      );
      return out.Attributes ?? {};
    } catch (err) {
      const name = (err as Error)?.name;
      if (err instanceof UnavailableError && attempt < THROTTLE_RETRIES && NOT_APPLIED.has(String(err.cause))) {
        await new Promise((r) => setTimeout(r, 10 * 2 ** attempt * (1 + Math.random())));
        continue;
      }
      if (name === 'ValidationException') throw new UnavailableError('LimiterValidation');
      throw err;
    }
  }
}

async function conditional(storage: Storage, input: UpdateInput) {
  try {
    return { ok: true as const, item: (await sendOnce(storage, input)) as ShardState };
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException)
      return { ok: false as const, old: (conditionFailedItem(err) ?? {}) as ShardState };
    throw err;
  }
}

const NOT_BANNED = '(attribute_not_exists(banUntil) OR banUntil <= :now)';

async function tryTake(
  storage: Storage,
  telemetry: { readonly log: WarningLog },
  req: TakeRequest,
  step: CountingStep,
  seen: ShardState,
): Promise<Attempt> {
  const { subject, shard, limits, w } = req;
  const Key = shardKey(subject, w.dayStart, shard);
  // The last lease's unused tokens go back to the day count with the first write that is applied, and to the minute
  // count when that write counts in the window they came from (never into another window: that could over-admit).
  const n = step.want;
  const values = { ':dn': n - req.giveBack, ':now': w.nowSec, ':dmax': limits.perDay - n };
  const minuteBack = (minuteStart: number) => (req.giveBackWindow === minuteStart ? req.giveBack : 0);
  // A minute's opening is recorded for the usage history beside the opening write, not after it, so the request
  // waits one round trip for both. The day count it records is the one the write will leave (the item as last seen,
  // plus this take); the history is best effort.
  const history =
    step.kind === 'open'
      ? recordMinuteOpen(storage, telemetry.log, subject, shard, w, (seen.d ?? 0) + values[':dn'])
      : undefined;
  const out =
    step.kind === 'count'
      ? await conditional(storage, {
          Key,
          UpdateExpression: 'ADD m :mn, d :dn',
          ConditionExpression: `ms = :ms AND m <= :mmax AND d <= :dmax AND ${NOT_BANNED}`,
          ExpressionAttributeValues: {
            ...values,
            ':mn': n - minuteBack(step.minuteStart),
            ':ms': step.minuteStart,
            ':mmax': limits.perMinute - n,
          },
          ReturnValues: 'ALL_NEW',
        })
      : // Opens the request's minute, counting this take in it. Windows only move forward: `ms < :ms`, never `<>`.
        await conditional(storage, {
          Key,
          UpdateExpression: 'SET ms = :ms, m = :n, expiresAt = if_not_exists(expiresAt, :exp) ADD d :dn',
          ConditionExpression: `(attribute_not_exists(ms) OR ms < :ms) AND (attribute_not_exists(d) OR d <= :dmax) AND ${NOT_BANNED}`,
          ExpressionAttributeValues: {
            ...values,
            ':n': n,
            ':ms': w.minuteStart,
            ':exp': w.dayStart + KEEP_SECONDS,
          },
          ReturnValues: 'ALL_NEW',
        });
  // Never rejects: a failed history write is logged there.
  await history;
  if (!out.ok) return { ok: false, state: out.old };
  const { ms = w.minuteStart, m = n, d = n } = out.item;
  return { ok: true, take: { kind: 'granted', granted: n, minuteStart: ms, minuteCount: m, dayCount: d } };
}

async function addRejections(storage: Storage, subject: string, minuteStart: number, n: number): Promise<number> {
  const item = await sendOnce(storage, {
    Key: rejectionKey(subject, minuteStart),
    UpdateExpression: 'ADD r :n SET expiresAt = if_not_exists(expiresAt, :exp)',
    ExpressionAttributeValues: { ':n': n, ':exp': minuteStart + KEEP_SECONDS },
    ReturnValues: 'UPDATED_NEW',
  });
  return Number(item.r ?? n);
}

/**
 * The key's bans of the day, on its first shard's day item: `bans` counted once per minute window (`bw`, the window
 * last counted), so the containers that all see one window cross the threshold count one ban between them, and the
 * later ones read the count the first left. Two numbers on an item that exists anyway: nothing grows with the rate.
 */
async function countBan(storage: Storage, subject: string, dayStart: number, minuteStart: number): Promise<number> {
  const out = await conditional(storage, {
    Key: shardKey(subject, dayStart, 0),
    UpdateExpression: 'SET bw = :ms, expiresAt = if_not_exists(expiresAt, :exp) ADD bans :one',
    ConditionExpression: 'attribute_not_exists(bw) OR bw <> :ms',
    ExpressionAttributeValues: { ':ms': minuteStart, ':one': 1, ':exp': dayStart + KEEP_SECONDS },
    ReturnValues: 'ALL_NEW',
  });
  const item = (out.ok ? out.item : out.old) as ShardState & { bans?: number };
  return Math.max(1, Number(item.bans ?? 1));
}

async function ban(storage: Storage, subject: string, limits: PlanLimits, banUntil: number, days: readonly number[]) {
  // Day by day, latest first (a failure part-way never leaves a ban that ends at midnight); a day's shards at once.
  for (const day of days) {
    await Promise.all(
      Array.from({ length: limiterShards(limits) }, (_, shard) =>
        // Never shortens a ban already written (a concurrent one, or this one resent): a failed condition is fine.
        conditional(storage, {
          Key: shardKey(subject, day, shard),
          UpdateExpression: 'SET banUntil = :b, expiresAt = if_not_exists(expiresAt, :exp)',
          ConditionExpression: 'attribute_not_exists(banUntil) OR banUntil < :b',
          ExpressionAttributeValues: { ':b': banUntil, ':exp': day + KEEP_SECONDS },
        }),
      ),
    );
  }
}

/** The most counter items (shards) any key can have: those of the highest limits a key may be given. */
export const MAX_SHARDS = MAX_LIMITER_SHARDS;

/**
 * Every shard's item of the day, read consistently in one BatchGetItem: every shard a key can have (at most
 * MAX_SHARDS), not only those of its limits now, so the day's count is whole whatever shard count its limits had
 * earlier today (a plan or limit change moves the counts: standing-admin.ts; this reads them wherever they are).
 */
async function usage(storage: Storage, subject: string, _limits: PlanLimits, w: Windows): Promise<Usage> {
  const table = storage.tables.state;
  let keys: Array<Record<string, unknown>> = Array.from({ length: MAX_SHARDS }, (_, s) =>
    shardKey(subject, w.dayStart, s),
  );
  const items: ShardState[] = [];
  for (let attempt = 0; keys.length && attempt < 5; attempt++) {
    const out = await guarded((options) =>
      storage.doc.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }),
        options,
      ),
    );
    items.push(...((out.Responses?.[table] ?? []) as ShardState[]));
    keys = (out.UnprocessedKeys?.[table]?.Keys as Array<Record<string, unknown>> | undefined) ?? [];
  }
  let minuteCount = 0;
  let dayCount = 0;
  let banUntil = 0;
  let bans = 0;
  for (const item of items) {
    if (item.ms !== undefined && item.ms >= w.minuteStart) minuteCount += item.m ?? 0;
    dayCount += item.d ?? 0;
    banUntil = Math.max(banUntil, item.banUntil ?? 0);
    // Counted on the first shard only (countBan): the largest is that one.
    bans = Math.max(bans, Number((item as { bans?: number }).bans ?? 0));
  }
  return { minuteCount, dayCount, ...(banUntil > w.nowSec ? { banUntil } : {}), ...(bans ? { bans } : {}) };
}

/** The limiter's counters on a storage; a lost usage-history write is logged through `telemetry`. */
export function createLimitStore(storage: Storage, telemetry: { readonly log: WarningLog }): LimitCounters {
  return {
    tryTake: (req, step, seen) => tryTake(storage, telemetry, req, step, seen),
    addRejections: (subject, minuteStart, n) => addRejections(storage, subject, minuteStart, n),
    countBan: (subject, dayStart, minuteStart) => countBan(storage, subject, dayStart, minuteStart),
    ban: (subject, limits, banUntil, days) => ban(storage, subject, limits, banUntil, days),
    usage: (subject, limits, w) => usage(storage, subject, limits, w),
  };
}

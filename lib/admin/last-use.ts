/**
 * When a key was last used: the UTC minute of its latest request the limiter admitted, read from the limiter's day
 * items (lambdas/storage/usage-history.ts readLastAdmitted). No request writes anything for it, so it costs reads
 * only, and only when an admin asks: per key, half a read unit for each shard item of each day read (eventually
 * consistent; DynamoDB charges an item asked for whether or not it exists).
 *
 * How far back: the days whose items the table's TTL cannot have deleted yet. A day's items expire KEEP_SECONDS after
 * the day starts (2 days: today's and yesterday's are always there); older ones may or may not be, so they are not
 * read, and "no use" is said for a stated span rather than for whatever TTL happened to leave.
 */
import { MAX_LIMITER_SHARDS, limiterShards, type PlanLimits } from '../../contract/plans.ts';
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { windowsAt } from '../../lambdas/domain/rate-limit.ts';
import { KEEP_SECONDS } from '../../lambdas/storage/limiter-items.ts';
import { readLastAdmitted, type LastUseQuery } from '../../lambdas/storage/usage-history.ts';
import type { AdminContext } from './context.ts';

export interface LastUse {
  /** The start (unix seconds) of the UTC minute of the key's latest admitted request; absent: none since `since`. */
  readonly minute?: number;
  /** The start (unix seconds) of the first UTC day read: a key without `minute` had no request admitted since. */
  readonly since: number;
}

/** The UTC days (their starts, newest first) whose limiter items are certainly kept at `nowMs`. */
export function lastUseDays(nowMs: number): number[] {
  const { dayStart, nowSec } = windowsAt(nowMs);
  const days: number[] = [];
  for (let day = dayStart; day + KEEP_SECONDS > nowSec; day -= 86_400) days.push(day);
  return days;
}

/** How many UTC days last use looks back over (today included). */
export const LAST_USE_DAYS = KEEP_SECONDS / 86_400;

const shardsOf = (limits: PlanLimits | undefined) => (limits ? limiterShards(limits) : 1);

/**
 * The shard items a listing reads per key and day: those of its limits now, and of the limits it had before a plan
 * change within the days read (its record keeps the first move of a day: planMove), so a key moved off a larger
 * layout is still read where its last request was counted. `keys show` reads every shard a key can have instead.
 */
function listedShards(record: KeyRecord, since: number): number {
  const before = record.planMove && record.planMove.day >= since ? shardsOf(record.planMove.limits) : 1;
  return Math.max(shardsOf(limitsOf(record)), before);
}

/**
 * When `record`'s key was last used (`keys show`): every shard item it can have (MAX_LIMITER_SHARDS) for each day
 * read, in one BatchGetItem (2 days x 6 shards: 12 items, 6 read units). Undefined when the target keeps no limiter
 * items to read (the in-memory stores of the tests).
 */
export async function lastUse(ctx: AdminContext, record: KeyRecord): Promise<LastUse | undefined> {
  const storage = ctx.deps.storage;
  if (!storage) return undefined;
  const days = lastUseDays(ctx.now());
  const found = await readLastAdmitted(storage, [{ subject: record.keyId, shards: MAX_LIMITER_SHARDS }], days);
  return lastUseOf(found.get(record.keyId), days);
}

/**
 * Last use of each of a page's keys (`keys list`), by key id: the shards of each key's layout (listedShards; 1 for
 * every key under 100,000 requests a minute) for each day read: 2 items, 1 read unit, per key.
 */
export async function lastUses(
  ctx: AdminContext,
  records: readonly KeyRecord[],
): Promise<Map<string, LastUse> | undefined> {
  const storage = ctx.deps.storage;
  if (!storage) return undefined;
  const days = lastUseDays(ctx.now());
  const since = days.at(-1)!;
  const queries: LastUseQuery[] = records.map((r) => ({ subject: r.keyId, shards: listedShards(r, since) }));
  const found = records.length ? await readLastAdmitted(storage, queries, days) : new Map<string, number>();
  return new Map(records.map((r) => [r.keyId, lastUseOf(found.get(r.keyId), days)]));
}

const lastUseOf = (minute: number | undefined, days: readonly number[]): LastUse => ({
  ...(minute !== undefined ? { minute } : {}),
  since: days.at(-1)!,
});

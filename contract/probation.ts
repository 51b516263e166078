/**
 * Where a key whose ban ended within the last `seconds` is counted: a probation API key of its own plan's pool (or
 * Enterprise bracket's), on that pool's usage plan, shared by such keys only. A ban is only known to the gateway once
 * the authorizer's cached Allow has expired, so each ban cycle (the cache TTL before the ban shows, then the ban,
 * then again) lets a flooding key spend a full bucket and a TTL of refill at the gateway: on its pool member that is
 * the bucket and day quota it shares with customers in good standing, and cycling all day drains the member's quota
 * (Free in about 11 cycles, Pro 23, Business 67, an Enterprise key of 1,200/min and 30,000/day 28: a day holds 90).
 * On probation it spends its probation key's instead.
 *
 * Each plan's probation keys are on its own pool's usage plan, never a smaller one: a key whose ban ended may
 * legitimately send up to its own limits (a Business key 100,000 a day, more than the Free pool's 82,500), and its
 * probation key's bucket and quota are sized for that plan's customers, as its member's are. Sharded: one probation
 * key for every key of a plan was drained by one abuser in a few hours, after which every key of that plan banned
 * that day met the gateway's 429 until midnight; sharded by pool member, an abuser drains only its own shard, and a
 * key banned on another shard is served. An Enterprise bracket has one probation member (its pool's member number
 * BRACKET_POOL.members, which no key id maps to), made by the admin tool with the bracket's pool; the authorizer names
 * it only once the admin tool has recorded it as made (lambdas/storage/bracket-probation.ts), and a key of a bracket
 * without it stays on its ordinary member. The pools' shards are the stack's, in the authorizer's own template.
 */
import { enterpriseBracket } from './brackets.ts';
import { BRACKET_POOL, PAYING_POOLS, bracketPoolKeyValue, poolMemberOf, type PayingPoolPlan } from './key-pool.ts';
import type { PlanLimits, PlanName } from './plans.ts';

/** The Free pool's probation shards (on the Free pool's usage plan), and how long probation lasts for every plan. */
export const PROBATION = { displayName: 'FreePoolProbation', seconds: 86_400, shards: 8 } as const;

/** Probation shards of each paying plan's pool (on that pool's usage plan): one for every 4 of its 16 members. */
export const PAYING_PROBATION = { shards: 4 } as const;

/**
 * The probation shard of a Free key: its pool member's number modulo the shards (stable for the key's life, spread
 * evenly for random key ids), so keys that share a member share a shard, and no shard holds more than one in `shards`.
 */
export const probationShardOf = (keyId: string): number => poolMemberOf(keyId) % PROBATION.shards;

/** The probation shard of a Pro or Business key, the same way within its plan's pool. */
export const payingProbationShardOf = (keyId: string, plan: PayingPoolPlan): number =>
  poolMemberOf(keyId, PAYING_POOLS[plan].members) % PAYING_PROBATION.shards;

/**
 * The value of a Free probation shard's API key on `stage` (grants nothing, like a pool member's; unique per stage
 * and shard). Shard 0 keeps the value the single probation key had, so the deployed key stays where it is.
 */
export function probationKeyValue(stage: string, shard: number): string {
  if (!Number.isInteger(shard) || shard < 0 || shard >= PROBATION.shards)
    throw new Error(`no probation shard ${shard}`);
  const suffix = shard === 0 ? '' : String(shard).padStart(2, '0');
  return `animalstorefreepoolprobation${stage.replace(/[^A-Za-z0-9]/g, '')}${suffix}`.padEnd(32, '0');
}

/** The value of a paying plan's probation shard's API key on `stage`. */
export function payingProbationKeyValue(stage: string, plan: PayingPoolPlan, shard: number): string {
  if (!Number.isInteger(shard) || shard < 0 || shard >= PAYING_PROBATION.shards)
    throw new Error(`no ${plan} probation shard ${shard}`);
  return `animalstorekeypool${plan}stage${stage.replace(/[^A-Za-z0-9]/g, '')}probation${String(shard).padStart(2, '0')}`;
}

/** The value of an Enterprise bracket's probation member on `stage`: the member after those key ids map to. */
export const bracketProbationKeyValue = (stage: string, bracketId: string): string =>
  bracketPoolKeyValue(stage, bracketId, BRACKET_POOL.members);

/** The probation API key a pooled key is counted against on `stage` while on probation. */
export function probationValueOf(record: { keyId: string; plan: PlanName; limits: PlanLimits }, stage: string): string {
  if (record.plan === 'free') return probationKeyValue(stage, probationShardOf(record.keyId));
  if (record.plan === 'enterprise') return bracketProbationKeyValue(stage, enterpriseBracket(record.limits).id);
  return payingProbationKeyValue(stage, record.plan, payingProbationShardOf(record.keyId, record.plan));
}

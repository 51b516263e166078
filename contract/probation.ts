/**
 * Where a Free key whose ban ended within the last `seconds` is counted: one of `shards` API keys per stage on the
 * pool's usage plan, chosen by the key's id, shared by such keys only. A ban is only known to the gateway once the
 * authorizer's cached Allow has expired, so each ban cycle (the cache TTL before the ban shows, then the ban, then
 * again) let a flooding key spend its pool member's bucket and day quota, which it shares with other Free
 * customers; on probation it spends its probation shard's instead. One shard for every such key was drained by one
 * abuser in about 11 ban cycles (about 3 hours), after which every Free key banned that day met the gateway's 429
 * until midnight; sharded, an abuser drains only its own shard, and a key banned on another shard is served.
 * Paying keys have API keys of their own and are not moved.
 */
import { poolMemberOf } from './key-pool.ts';

export const PROBATION = { displayName: 'FreePoolProbation', seconds: 86_400, shards: 8 } as const;

/**
 * The probation shard of a key: its pool member's number modulo the shards (stable for the key's life, spread evenly
 * for random key ids), so keys that share a member share a shard, and no shard holds more than one in `shards`.
 */
export const probationShardOf = (keyId: string): number => poolMemberOf(keyId) % PROBATION.shards;

/**
 * The value of a probation shard's API key on `stage` (grants nothing, like a pool member's; unique per stage and
 * shard). Shard 0 keeps the value the single probation key had, so the deployed key stays where it is.
 */
export function probationKeyValue(stage: string, shard: number): string {
  if (!Number.isInteger(shard) || shard < 0 || shard >= PROBATION.shards)
    throw new Error(`no probation shard ${shard}`);
  const suffix = shard === 0 ? '' : String(shard).padStart(2, '0');
  return `animalstorefreepoolprobation${stage.replace(/[^A-Za-z0-9]/g, '')}${suffix}`.padEnd(32, '0');
}

/**
 * Probation that one key cannot drain: a Free key whose ban ended within the day is counted on its probation shard's
 * API key (contract/probation.ts), so an abuser cycling ban after ban all day spends its own shard's bucket and day
 * quota, and a key banned on another shard is still served. Over HTTP through the local gateway, which caches the
 * authorizer's decision for the template's TTL and enforces the template's usage plans on the test's clock; each
 * cycle's flood (what passes while the cached Allow outlives the new ban: a full bucket and a minute's refill) is
 * counted on the usage-plan model directly, as the gateway counts it, instead of thousands of HTTP requests.
 *
 * Figures (the pool's usage plan per probation key: bucket 4,800, 45/s, 82,500 a day; bans of 15 minutes and a 60 s
 * cache, a cycle every 16 minutes): the abuser's shard is spent after 11 cycles (under 3 hours); the other key
 * is served after it, and a key on the abuser's shard meets 429 quota_exceeded, as every banned key did when
 * probation was one key.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { poolThrottle } from '../../contract/key-pool.ts';
import { BAN_POLICY } from '../../contract/plans.ts';
import { probationKeyValue, probationShardOf } from '../../contract/probation.ts';
import { generateKey, hashKey } from '../../lambdas/domain/keys.ts';
import { noteStanding } from '../../lambdas/storage/standing.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { devKeyId } from '../helpers/key-standing.ts';

/** Two Free keys on different probation shards. */
function twoShards(): { a: string; b: string } {
  const a = generateKey();
  for (;;) {
    const b = generateKey();
    if (probationShardOf(devKeyId(b)) !== probationShardOf(devKeyId(a))) return { a, b };
  }
}
const { a, b } = twoShards();
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({
    devKeys: [
      { key: a, plan: 'free' },
      { key: b, plan: 'free' },
    ],
    authCacheTtlSeconds: undefined,
  });
});
afterAll(() => api?.close());

it('an abuser cycling bans all day drains only its probation shard: a key banned on another is still served', async () => {
  const stage = String([...api.model.functions.values()].map((f) => f.environment.USAGE_KEYS_STAGE).find(Boolean));
  const shardOf = (key: string) => probationKeyValue(stage, probationShardOf(devKeyId(key)));
  const free = { plan: 'free' };
  const pool = poolThrottle();
  const ttl = api.model.authorizers.values().next().value!.ttlSeconds;
  const cycleSeconds = BAN_POLICY.banSeconds + ttl;
  const dayStart = Date.UTC(2034, 5, 7) / 1000;
  let now = dayStart + 1800;
  api.clock.set(() => now * 1000);

  // A's ban ends, A comes back: the gateway asks the authorizer, which names A's probation shard; then A floods
  // for as long as the cached Allow lasts. Cycle after cycle, until the shard's day quota is spent.
  let cycles = 0;
  let spent = false;
  while (!spent && now + cycleSeconds < dayStart + 86_400) {
    cycles++;
    await noteStanding(api.storage, hashKey(a), { bannedUntil: now - 1 });
    const before = api.usage.used(shardOf(a), free);
    const res = await api.call('/pets?limit=1', { key: a, contract: false });
    await res.arrayBuffer();
    if (res.status === 429) break;
    expect(api.usage.used(shardOf(a), free), 'counted on its probation shard').toBe(before + 1);
    for (let i = 0; i < pool.burstLimit + ttl * pool.rateLimit; i++) {
      const verdict = api.usage.admit(shardOf(a), free, (now + (i * ttl) / pool.burstLimit) * 1000);
      if (verdict === 'QUOTA_EXCEEDED') {
        spent = true;
        break;
      }
    }
    now += cycleSeconds;
  }
  expect(spent || cycles > 1, 'the abuser spent its shard within the day').toBe(true);
  expect(cycles).toBeLessThanOrEqual(Math.ceil(pool.quotaPerDay / (pool.burstLimit + ttl * pool.rateLimit)) + 1);

  // Later that day, B's ban ends too: B is counted on its own shard, which A never touched, and is served.
  now += cycleSeconds;
  await noteStanding(api.storage, hashKey(b), { bannedUntil: now - 1 });
  await noteStanding(api.storage, hashKey(a), { bannedUntil: now - 1 });
  const served = await api.call('/pets?limit=1', { key: b });
  expect(served.status).toBe(200);
  expect(api.usage.used(shardOf(b), free)).toBe(1);
  // A, and any key on A's shard, meets the gateway's 429: what every banned Free key met when probation was one key.
  const refused = await api.call('/pets?limit=1', { key: a, contract: false });
  expect(refused.status).toBe(429);
  expect(((await refused.json()) as { code: string }).code).toBe('quota_exceeded');
  console.log(
    `probation: A spent its shard in ${cycles} ban cycles (${((cycles * cycleSeconds) / 3600).toFixed(1)} h); B served`,
  );
}, 300_000);

/**
 * Probation that one key cannot drain, on every plan: a key whose ban ended within the day is counted on its plan's
 * probation key (contract/probation.ts: Free 8 shards, Pro and Business 4 each, one per Enterprise bracket), so an
 * abuser cycling ban after ban all day spends its own shard's bucket and day quota, and a key banned on another shard
 * (for Enterprise: in another bracket) is still served. Over HTTP through the local gateway, which caches the
 * authorizer's decision for the template's TTL and enforces the template's usage plans on the test's clock; each
 * cycle's flood (what passes while the cached Allow outlives the new ban: a full bucket and a minute's refill) is
 * counted on the usage-plan model directly, as the gateway counts it (test/helpers/plan-keys.ts banCycle).
 *
 * Figures (bans of 15 minutes and a 60 s cache, a cycle every 16 minutes; a probation key is on its pool's usage
 * plan): the abuser's shard is spent after 12 cycles on Free (bucket 4,800, 45/s, 82,500 a day), 23 on Pro (4,800,
 * 40/s, 161,600), 67 on Business (4,000, 34/s, 402,000), 28 on the Enterprise bracket (5,000, 100/s, 300,000); the
 * other key is served after it, and a key on the abuser's shard meets 429 quota_exceeded.
 */
import { expect, it } from 'vitest';
import { BAN_POLICY } from '../../contract/plans.ts';
import { probationValueOf } from '../../contract/probation.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { noteStanding } from '../../lambdas/storage/standing.ts';
import { codeOf } from '../helpers/key-standing.ts';
import { banCycle, cyclesToSpend, planKeysFixture, usedOn } from '../helpers/plan-keys.ts';

const fixture = planKeysFixture('shards');

fixture.pairs.forEach(({ name, a, b }, day) => {
  it(`a ${name} abuser cycling bans all day drains only its probation shard: a key banned on another is served`, async () => {
    const { api, stage } = fixture;
    const ttl = api.model.authorizers.values().next().value!.ttlSeconds;
    const cycleSeconds = BAN_POLICY.banSeconds + ttl;
    const shardOfA = probationValueOf(a, stage);
    const dayStart = Date.UTC(2034, 5, 7 + day) / 1000;
    let now = dayStart + 1800;

    // A's ban ends, A comes back: the gateway asks the authorizer, which names A's probation shard; then A floods
    // for as long as the cached Allow lasts. Cycle after cycle, until the shard's day quota is spent.
    let cycles = 0;
    let spent = false;
    while (!spent && now + cycleSeconds < dayStart + 86_400) {
      api.clock.set(() => now * 1000);
      cycles++;
      const before = usedOn(api, shardOfA, a);
      const cycle = await banCycle(api, a, shardOfA, now, ttl);
      if (cycle.status !== '200') break;
      expect(usedOn(api, shardOfA, a), 'counted on its probation shard').toBeGreaterThan(before);
      spent = cycle.spent;
      now += cycleSeconds;
    }
    expect(spent, 'the abuser spent its shard within the day').toBe(true);
    // A cycle's flood fills the bucket it found less the request that asked the authorizer: one cycle more at most.
    expect(cycles).toBeLessThanOrEqual(cyclesToSpend(api, shardOfA, a, ttl) + 1);

    // Later that day, B's ban ends too: B is counted on its own shard, which A never touched, and is served.
    now += cycleSeconds;
    api.clock.set(() => now * 1000);
    await noteStanding(api.storage, hashKey(b.key), { bannedUntil: now - 1 });
    await noteStanding(api.storage, hashKey(a.key), { bannedUntil: now - 1 });
    expect(await codeOf(await api.call('/pets?limit=1', { key: b.key }))).toBe('200');
    expect(usedOn(api, probationValueOf(b, stage), b)).toBe(1);
    // A, and any key on A's shard, meets the gateway's 429.
    expect(await codeOf(await api.call('/pets?limit=1', { key: a.key, contract: false }))).toBe('429 quota_exceeded');
    console.info(
      `probation (${name}): A spent its shard in ${cycles} ban cycles (${((cycles * cycleSeconds) / 3600).toFixed(1)} h); B served`,
    );
  }, 300_000);
});

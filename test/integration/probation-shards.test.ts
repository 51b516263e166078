/**
 * Probation that one key cannot drain, on every plan: a key whose ban ended within the day is counted on its plan's
 * probation key (contract/probation.ts: Free 8 shards, Pro and Business 4 each, one per Enterprise bracket). Over
 * HTTP through the local gateway, which caches the authorizer's decision for the template's TTL and enforces the
 * template's usage plans on the test's clock; each cycle's flood (what passes while the cached Allow outlives the new
 * ban: a full bucket and a minute's refill) is counted on the usage-plan model directly, as the gateway counts it
 * (test/helpers/plan-keys.ts banCycle).
 *
 * A probation key is on its pool's usage plan, which admits what the account admits (MEMBER_PLAN): an abuser cycling
 * bans all day (bans of 15 minutes and a 60 s cache, a cycle every 16 minutes) cannot spend it, so no key on its
 * shard, nor on another, meets the gateway's 429 for it. Sharding still keeps one abuser's floods off the other
 * shards' keys.
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
  it(`a ${name} abuser cycling bans all day cannot spend its probation shard: it and a key banned on another are served`, async () => {
    const { api, stage } = fixture;
    const ttl = api.model.authorizers.values().next().value!.ttlSeconds;
    const cycleSeconds = BAN_POLICY.banSeconds + ttl;
    const shardOfA = probationValueOf(a, stage);
    const dayStart = Date.UTC(2034, 5, 7 + day) / 1000;
    let now = dayStart + 1800;

    // The day's cycles after its first half hour, against the cycles that would spend A's shard.
    const cyclesInDay = Math.floor((dayStart + 86_400 - now) / cycleSeconds);
    const shardWouldLast = cyclesToSpend(api, shardOfA, a, ttl);
    expect(shardWouldLast, 'the shard outlasts a day of ban cycles').toBeGreaterThan(cyclesInDay);

    // A's ban ends, A comes back: the gateway asks the authorizer, which names A's probation shard; then A floods
    // for as long as the cached Allow lasts. A few cycles, played whole.
    let cycles = 0;
    for (; cycles < 3; cycles++) {
      api.clock.set(() => now * 1000);
      const before = usedOn(api, shardOfA, a);
      const cycle = await banCycle(api, a, shardOfA, now, ttl);
      expect(cycle, `cycle ${cycles + 1}`).toEqual({ status: '200', spent: false });
      expect(usedOn(api, shardOfA, a), 'counted on its probation shard').toBeGreaterThan(before);
      now += cycleSeconds;
    }

    // Later that day, B's ban ends too: B is counted on its own shard, which A never touched, and is served; A,
    // its own shard unspent, is served too once its ban ends (its limiter, not the gateway, decides).
    now += cycleSeconds;
    api.clock.set(() => now * 1000);
    await noteStanding(api.storage, hashKey(b.key), { bannedUntil: now - 1 });
    await noteStanding(api.storage, hashKey(a.key), { bannedUntil: now - 1 });
    expect(await codeOf(await api.call('/pets?limit=1', { key: b.key }))).toBe('200');
    expect(usedOn(api, probationValueOf(b, stage), b)).toBe(1);
    expect(await codeOf(await api.call('/pets?limit=1', { key: a.key, contract: false }))).toBe('200');
    console.info(
      `probation (${name}): the shard would last ${shardWouldLast} ban cycles, the day holds ${cyclesInDay}; A and B served`,
    );
  }, 300_000);
});

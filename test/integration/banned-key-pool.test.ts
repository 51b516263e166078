/**
 * A banned key that keeps flooding must not spend the pool member it shares with other customers of its plan, ban
 * cycle after ban cycle, on every plan. Over HTTP through the local gateway, which enforces the template's usage
 * plans and caches the authorizer's decision for the template's TTL, as API Gateway does (on the test's clock): while
 * the key is banned the gateway denies it (429 key_banned, nothing counted); once its ban ends the authorizer counts
 * it on its plan's probation key, so the flood of each next cycle (the cache TTL before its next ban shows) leaves the
 * member alone. Members now admit what the account admits (MEMBER_PLAN), so even a flood left on the member all day
 * would not spend its day quota; probation still keeps a recently banned key's floods off the member its neighbours
 * share.
 */
import { expect, it } from 'vitest';
import { poolValueOf } from '../../contract/key-pool.ts';
import { BAN_POLICY } from '../../contract/plans.ts';
import { probationValueOf } from '../../contract/probation.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { noteStanding } from '../../lambdas/storage/standing.ts';
import { codeOf } from '../helpers/key-standing.ts';
import { banCycle, cyclesToSpend, flood, planKeysFixture, usedOn } from '../helpers/plan-keys.ts';

// The template's authorizer cache (60 s), as deployed.
const fixture = planKeysFixture('member');

fixture.pairs.forEach(({ name, a, b }, day) => {
  it(`a banned ${name} key's floods, ban cycle after ban cycle, leave its pool member's quota to the others`, async () => {
    const { api, stage } = fixture;
    const memberKey = poolValueOf(a, stage);
    const probationKey = probationValueOf(a, stage);
    const used = () => usedOn(api, memberKey, a);
    const ttl = api.model.authorizers.values().next().value!.ttlSeconds;
    const dayStart = Date.UTC(2034, 5, 6 + day) / 1000;
    const start = dayStart + 1800;
    const banEnds = start + BAN_POLICY.banSeconds;
    api.clock.set(() => start * 1000);
    // Key A is banned (as its function's limiter records it when A ignores its 429s).
    await noteStanding(api.storage, hashKey(a.key), { bannedUntil: banEnds });
    const before = used();

    // Banned: the gateway denies it, nothing counts.
    expect([...(await flood(api, a, 200)).keys()]).toEqual(['429 key_banned']);
    expect(used()).toBe(before);

    // The ban has ended (and the cached Deny with it): A floods again, past a Free minute, until its next ban. Its
    // requests count against its probation key, not the member.
    api.clock.set(() => (banEnds + ttl + 1) * 1000);
    const probationBefore = usedOn(api, probationKey, a);
    const second = await flood(api, a, 300);
    expect(second.get('200 ok')).toBe(Math.min(300, a.limits.perMinute));
    expect(used(), "none of A's second cycle counted on the member").toBe(before);
    expect(usedOn(api, probationKey, a)).toBe(probationBefore + 300);

    // A goes on all day: each ban cycle it floods as much as the cached Allow admits. Counted on the member, that
    // would spend the member's day quota within the day; it spends only the probation key's.
    const cycleSeconds = BAN_POLICY.banSeconds + ttl;
    let now = banEnds + ttl + 1 + cycleSeconds;
    let cycles = 0;
    let shardSpentAt: number | undefined;
    // A few cycles played whole (each a full bucket and a minute at the account's rate, counted on the usage-plan
    // model), the rest of the day by arithmetic below: the member outlasts every cycle the day holds.
    const cyclesInDay = Math.floor((dayStart + 86_400 - now) / cycleSeconds);
    for (; cycles < 3 && now + cycleSeconds < dayStart + 86_400; now += cycleSeconds) {
      api.clock.set(() => now * 1000);
      cycles++;
      const { status, spent } = await banCycle(api, a, probationKey, now, ttl);
      if (shardSpentAt === undefined) expect(status, `cycle ${cycles}`).toBe('200');
      else expect(status, `cycle ${cycles}: its probation key is spent`).toBe('429 quota_exceeded');
      if (spent) shardSpentAt ??= cycles;
      expect(used(), `cycle ${cycles} counted on the member`).toBe(before);
    }
    const memberWouldLast = cyclesToSpend(api, memberKey, a, ttl);
    expect(memberWouldLast, 'the member outlasts a day of cycles even without probation').toBeGreaterThan(cyclesInDay);

    // Key B, on the same member, is served at the day's end (up to a minute of it, 60 requests).
    const n = Math.min(60, b.limits.perMinute);
    const statuses = [];
    for (let i = 0; i < n; i++) statuses.push(await codeOf(await api.call('/pets?limit=1', { key: b.key })));
    expect(new Set(statuses)).toEqual(new Set(['200']));
    expect(used()).toBe(before + n);
    console.info(
      `${name}: ${cyclesInDay} ban cycles in the day; on its member A would have spent the member's quota in ` +
        `${memberWouldLast}; its probation key ran out after ${shardSpentAt ?? 'none of them'}; B served`,
    );
  }, 300_000);
});

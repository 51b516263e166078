/**
 * A key whose day quota is spent and keeps sending must not hurt the customers it shares a pool member with, on
 * every plan: the authorizer counts it against the spent-keys API key, whose usage plan refuses it at the gateway, so
 * the flood never reaches the member's bucket or day quota. Over HTTP through the local gateway, which enforces the
 * template's usage plans and caches the authorizer's decision for the template's TTL, as API Gateway does (on the
 * test's clock).
 */
import { expect, it } from 'vitest';
import { poolValueOf } from '../../contract/key-pool.ts';
import { codeOf, setDayCounters } from '../helpers/key-standing.ts';
import { callerOf, flood, planKeysFixture, usedOn } from '../helpers/plan-keys.ts';

// The template's authorizer cache (60 s), as deployed: a spent key's flood is answered from the cached decision.
const fixture = planKeysFixture('member');

fixture.pairs.forEach(({ name, a, b }, day) => {
  it(`a spent ${name} key's flood is refused at the gateway and leaves a key on its pool member untouched`, async () => {
    const { api } = fixture;
    const noon = Date.UTC(2033, 2, 4 + day, 12, 0, 0);
    // Key A has used its requests of today (as the limiter records them).
    await setDayCounters(api, a.keyId, noon, { d: a.limits.perDay });
    const memberKey = poolValueOf(a, fixture.stage);
    // The first request after the day is spent reaches the function (the gateway does not know yet): its limiter
    // refuses it, exactly, and records the key's standing where the authorizer reads it.
    const first = await api.call('/pets?limit=1', { key: a.key });
    expect(first.status).toBe(429);
    expect(first.headers.get('x-ratelimit-limit')).toBe(String(a.limits.perDay));
    // Once the authorizer's cached answer has expired (the template's TTL), the gateway knows.
    api.clock.set(() => noon + 61_000);
    const before = usedOn(api, memberKey, a);
    // More than the member's whole bucket, at one instant (no refill): counted on the member, this would empty it
    // for everyone on it.
    const bucket = api.usage.planFor(memberKey, callerOf(a))!.burstLimit!;
    const codes = await flood(api, a, bucket + 1, 50);
    expect([...codes.keys()]).toEqual(['429 quota_exceeded']);
    expect(usedOn(api, memberKey, a), "none of A's requests counted on the member").toBe(before);

    // Key B, on the same member, is served at that same instant: its minute (up to 60 requests of it).
    const n = Math.min(60, b.limits.perMinute);
    const statuses = [];
    for (let i = 0; i < n; i++) statuses.push(await codeOf(await api.call('/pets?limit=1', { key: b.key })));
    expect(new Set(statuses)).toEqual(new Set(['200']));
    expect(usedOn(api, memberKey, b)).toBe(before + n);

    // The gateway answers A as the function would: 429 quota_exceeded with Retry-After.
    const res = await api.call('/pets?limit=1', { key: a.key });
    expect(await codeOf(res.clone())).toBe('429 quota_exceeded');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  }, 180_000);
});

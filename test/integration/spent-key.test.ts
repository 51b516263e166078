/**
 * A Free key whose day quota is spent and keeps sending must not hurt the Free customers it shares a pool member
 * with: the authorizer counts it against the spent-keys API key, whose usage plan refuses it at the gateway, so the
 * flood never reaches the member's bucket or day quota. Over HTTP through the local gateway, which enforces the
 * template's usage plans and caches the authorizer's decision for the template's TTL, as API Gateway does (on the
 * test's clock).
 */
import { expect, it } from 'vitest';
import { FREE_KEY_POOL, poolKeyValue, poolThrottle } from '../../contract/key-pool.ts';
import { PLANS } from '../../contract/plans.ts';
import { devKeyId, freePairFixture, setDayCounters } from '../helpers/key-standing.ts';

// The template's authorizer cache (60 s), as deployed: a spent key's flood is answered from the cached decision.
const fixture = freePairFixture();
const { a, b, member } = fixture;
const idA = devKeyId(a);

it("a spent Free key's flood is refused at the gateway and leaves another Free key on its pool member untouched", async () => {
  const noon = Date.UTC(2033, 2, 4, 12, 0, 0);
  // Key A has used its 1,000 requests of today (as the limiter records them).
  await setDayCounters(fixture.api, idA, noon, { d: PLANS.free.limits!.perDay });
  // The stage the template's pool keys are named for, as the authorizer is told.
  const keysStage = [...fixture.api.model.functions.values()].map((f) => f.environment.USAGE_KEYS_STAGE).find(Boolean);
  const memberKey = poolKeyValue(String(keysStage), member);
  // The first request after the day is spent reaches the function (the gateway does not know yet): its limiter
  // refuses it, exactly, and records the key's standing where the authorizer reads it.
  const first = await fixture.api.call('/pets?limit=1', { key: a });
  expect(first.status).toBe(429);
  expect(first.headers.get('x-ratelimit-limit')).toBe(String(PLANS.free.limits!.perDay));
  // Once the authorizer's cached answer has expired (the template's TTL), the gateway knows.
  fixture.api.clock.set(() => noon + 61_000);
  const before = fixture.api.usage.used(memberKey, { plan: 'free' });
  // More than the member's whole bucket, at one instant (no refill): before, this emptied it for everyone on it.
  const flood = poolThrottle().burstLimit + 1;
  const codes = new Map<string, number>();
  for (let i = 0; i < flood; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, flood - i) }, () =>
        fixture.api.call('/pets?limit=1', { key: a, contract: i === 0 }),
      ),
    );
    for (const res of batch) {
      const { code } = (await res.json()) as { code: string };
      codes.set(`${res.status} ${code}`, (codes.get(`${res.status} ${code}`) ?? 0) + 1);
    }
  }
  expect([...codes.keys()]).toEqual(['429 quota_exceeded']);
  expect(fixture.api.usage.used(memberKey, { plan: 'free' }), "none of A's requests counted on the member").toBe(
    before,
  );

  // Key B, on the same member, gets its whole minute.
  const perMinute = PLANS.free.limits!.perMinute;
  const statuses = [];
  for (let i = 0; i < perMinute; i++) statuses.push((await fixture.api.call('/pets?limit=1', { key: b })).status);
  expect(statuses.every((s) => s === 200)).toBe(true);
  expect(fixture.api.usage.used(memberKey, { plan: 'free' })).toBe(before + perMinute);
  expect(FREE_KEY_POOL.members).toBeGreaterThan(1);
}, 120_000);

it('the gateway answers a spent key as the function would: 429 quota_exceeded with Retry-After', async () => {
  const res = await fixture.api.call('/pets?limit=1', { key: a });
  expect(res.status).toBe(429);
  expect(((await res.json()) as { code: string }).code).toBe('quota_exceeded');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
});

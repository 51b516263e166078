/**
 * A banned Free key that keeps flooding must not spend the pool member it shares with other Free customers, ban
 * cycle after ban cycle. Over HTTP through the local gateway, which enforces the template's usage plans and caches
 * the authorizer's decision for the template's TTL, as API Gateway does (on the test's clock): while the key is
 * banned the gateway denies it (429 key_banned, nothing counted); once its ban ends the authorizer counts it on the
 * probation API key, so the flood of its next cycle (the cache TTL before its next ban shows) leaves the member alone.
 */
import { expect, it } from 'vitest';
import { poolKeyValue } from '../../contract/key-pool.ts';
import { probationKeyValue, probationShardOf } from '../../contract/probation.ts';
import { BAN_POLICY, PLANS } from '../../contract/plans.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { noteStanding } from '../../lambdas/storage/standing.ts';
import { devKeyId, freePairFixture } from '../helpers/key-standing.ts';

// The template's authorizer cache (60 s), as deployed.
const fixture = freePairFixture();
const { a, b, member } = fixture;

/** `n` requests of key `key` at the clock's instant; the statuses and codes seen. */
async function flood(key: string, n: number): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let i = 0; i < n; i += 25) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(25, n - i) }, () => fixture.api.call('/pets?limit=1', { key, contract: false })),
    );
    for (const res of batch) {
      const { code } = (await res.json()) as { code?: string };
      const k = `${res.status} ${code ?? 'ok'}`;
      seen.set(k, (seen.get(k) ?? 0) + 1);
    }
  }
  return seen;
}

it("a banned Free key's floods, ban cycle after ban cycle, leave its pool member's quota to the others", async () => {
  const keysStage = [...fixture.api.model.functions.values()].map((f) => f.environment.USAGE_KEYS_STAGE).find(Boolean);
  const memberKey = poolKeyValue(String(keysStage), member);
  const probationKey = probationKeyValue(String(keysStage), probationShardOf(devKeyId(a)));
  const used = () => fixture.api.usage.used(memberKey, { plan: 'free' });
  const noon = Date.UTC(2034, 5, 6, 12, 0, 0);
  const banEnds = noon / 1000 + BAN_POLICY.banSeconds;
  fixture.api.clock.set(() => noon);
  // Key A is banned (as its function's limiter records it when A ignores its 429s).
  await noteStanding(fixture.api.storage, hashKey(a), { bannedUntil: banEnds });
  const before = used();

  // Banned: the gateway denies it, nothing counts.
  expect([...(await flood(a, 200)).keys()]).toEqual(['429 key_banned']);
  expect(used()).toBe(before);

  // The ban has ended (and the cached Deny with it): A floods again, well past its minute, until its next ban. Its
  // requests count against the probation key, not the member.
  fixture.api.clock.set(() => (banEnds + 61) * 1000);
  const probationBefore = fixture.api.usage.used(probationKey, { plan: 'free' });
  const second = await flood(a, 300);
  expect(second.get('200 ok')).toBe(PLANS.free.limits!.perMinute);
  expect(used(), "none of A's second cycle counted on the member").toBe(before);
  expect(fixture.api.usage.used(probationKey, { plan: 'free' })).toBe(probationBefore + 300);

  // Key B, on the same member, is untouched: its whole minute.
  const statuses = [];
  for (let i = 0; i < PLANS.free.limits!.perMinute; i++)
    statuses.push((await fixture.api.call('/pets?limit=1', { key: b })).status);
  expect(statuses.every((s) => s === 200)).toBe(true);
  expect(used()).toBe(before + PLANS.free.limits!.perMinute);
}, 120_000);

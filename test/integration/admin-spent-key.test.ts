/**
 * A key that spent its day and is then moved to a bigger plan is served again once the authorizer's cached answer
 * expires: the plan change forgets the key's spent day at the gateway (what a function told it on the old limits), in
 * its own transaction, so the authorizer stops denying it. Over HTTP through the local gateway, with the template's
 * authorizer cache TTL, on the test's clock; the admin tool runs `--local` against the same DynamoDB Local.
 */
import { expect, it } from 'vitest';
import { PLANS } from '../../contract/plans.ts';
import { runLocalAdmin } from '../helpers/admin.ts';
import { codeOf, setDayCounters, cachedAdminFixture } from '../helpers/key-standing.ts';

// The template's authorizer cache (60 s), as deployed.
const fixture = cachedAdminFixture('pro');
const { key, keyId } = fixture;

it('a Pro key that spent its day is served after `keys set-plan` to Business, once the authorizer cache expires', async () => {
  const noon = Date.UTC(2033, 2, 4, 12, 0, 0);
  // The key has used its 10,000 requests of today (as the limiter records them).
  await setDayCounters(fixture.api, keyId, noon, { d: PLANS.pro.limits!.perDay });
  // The function's limiter refuses it and records its standing; after the cache TTL the gateway refuses it too.
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');
  fixture.api.clock.set(() => noon + 61_000);
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');

  const moved = await runLocalAdmin(fixture.deps, 'keys', 'set-plan', keyId, 'business');
  expect(moved.err).toBe('');
  expect(moved.out).toMatch(/cached authorizer results expire/);
  // Within the TTL the gateway still answers from the cached decision (as API Gateway does); after it, the authorizer
  // allows the key and the function admits it under Business's day.
  fixture.api.clock.set(() => noon + 122_000);
  const res = await fixture.api.call('/pets?limit=1', { key });
  expect(await codeOf(res)).toBe('200');
  expect(res.headers.get('x-ratelimit-limit')).toBe(String(PLANS.business.limits!.perMinute));
}, 60_000);

/**
 * A key's standing an admin can see and lift: a spent day an admin lifted is recorded for the gateway again when the
 * key spends it a second time the same day, by the same warm function that recorded the first, and `keys show` says
 * so. Over HTTP through the local gateway with the template's authorizer TTL (60 s), the admin tool `--local` on the
 * API's clock.
 */
import { expect, it } from 'vitest';
import { PLANS } from '../../contract/plans.ts';
import { runLocalAdmin } from '../helpers/admin.ts';
import { cachedAdminFixture, codeOf, setDayCounters } from '../helpers/key-standing.ts';

const fixture = cachedAdminFixture('pro');
const { key, keyId } = fixture;
const hashOf = async () => (await fixture.deps.store.getById(keyId))!.hash;

it('a second spend the same day, after an admin lifted the first, is recorded for the gateway again', async () => {
  const day = Date.UTC(2035, 1, 9, 9, 0, 0);
  const dayStart = day / 1000 - ((day / 1000) % 86_400);
  const perDay = PLANS.pro.limits!.perDay;
  await setDayCounters(fixture.api, keyId, day, { d: perDay });
  // The function refuses it and records the spent day where the authorizer reads it.
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');
  expect((await fixture.deps.store.readStanding(await hashOf())).spentDay).toBe(dayStart);

  fixture.api.clock.set(() => day + 61_000);
  const lifted = await runLocalAdmin(fixture.deps, 'keys', 'unban', keyId);
  expect(lifted.out).toMatch(new RegExp(`^Lifted today's spent quota of ${keyId}`));
  expect((await fixture.deps.store.readStanding(await hashOf())).spentDay).toBeUndefined();
  // Served again once the cached decision expires.
  fixture.api.clock.set(() => day + 122_000);
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('200');

  // It spends the day again: the same warm function refuses it, and records it again (it learnt the first spend
  // two minutes ago, more than an authorizer TTL: had the gateway still held it, the key would not have got here).
  await setDayCounters(fixture.api, keyId, day + 125_000, { d: perDay });
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');
  expect((await fixture.deps.store.readStanding(await hashOf())).spentDay).toBe(dayStart);
  // And the gateway stops it there once its cached Allow expires: the authorizer denies it.
  fixture.api.clock.set(() => day + 190_000);
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');
  expect((await runLocalAdmin(fixture.deps, 'keys', 'show', keyId)).out).toContain('DAY SPENT until 2035-02-10');
}, 60_000);

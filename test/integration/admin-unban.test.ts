/**
 * `keys unban` lifts a ban before it ends, and the key is served again within the authorizer cache TTL: the gateway
 * (whose authorizer read the ban from the key's standing) and a warm function that learnt of the ban itself both let
 * it through. Over HTTP through the local gateway with the template's authorizer TTL, on the test's clock.
 */
import { expect, it } from 'vitest';
import { runLocalAdmin } from '../helpers/admin.ts';
import { codeOf, setDayCounters, cachedAdminFixture } from '../helpers/key-standing.ts';

const fixture = cachedAdminFixture('pro');
const { key, keyId } = fixture;

it('a banned key is served again within the authorizer TTL after `keys unban`, by the gateway and a warm function', async () => {
  const noon = Date.UTC(2033, 6, 7, 12, 0, 0);
  fixture.api.clock.set(() => noon);
  const notBanned = await runLocalAdmin(fixture.deps, 'keys', 'unban', keyId);
  expect(notBanned).toMatchObject({
    code: 0,
    out: `${keyId} is neither banned nor out of its day: nothing changed`,
  });
  // Banned for 15 minutes, as the limiter writes it on the key's counters.
  await setDayCounters(fixture.api, keyId, noon, { d: 5, banUntil: noon / 1000 + 900 });
  // The function refuses it (and remembers the ban), and records the ban where the authorizer reads it.
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 key_banned');
  fixture.api.clock.set(() => noon + 61_000);
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 key_banned');

  const lifted = await runLocalAdmin(fixture.deps, 'keys', 'unban', keyId);
  expect(lifted.err).toBe('');
  expect(lifted.out).toMatch(new RegExp(`^Lifted its ban \\(until 2033-07-07T12:15:00.000Z\\) of ${keyId}`));
  expect((await runLocalAdmin(fixture.deps, 'keys', 'usage', keyId, '--json')).out).toMatch(/"bannedUntil": null/);
  // One authorizer TTL later the gateway and the warm function both serve it.
  fixture.api.clock.set(() => noon + 122_000);
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('200');
}, 60_000);

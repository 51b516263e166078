/**
 * With the authorizer cache off (`ANIMAL_STORE_AUTH_CACHE_TTL=0` locally) an unban is served within a second: the
 * warm function that learnt of the ban trusts it as long as the gateway caches the authorizer's answer, and at
 * least MIN_BAN_RECHECK_MS (so requests already past the gateway cost no write each), and `keys show` names the ban
 * and a spent day with their ends until lifted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateKey } from '../../lambdas/domain/keys.ts';
import { MIN_BAN_RECHECK_MS } from '../../lambdas/domain/limiter.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { codeOf, devKeyId, setDayCounters } from '../helpers/key-standing.ts';

// A key of the issued form: the authorizer refuses any other shape without a read (401 before any standing).
const key = generateKey();
const keyId = devKeyId(key);
let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin({ devKeys: [{ key, plan: 'pro' }], authCacheTtlSeconds: 0 }));
  deps = { ...deps, now: api.clock.now };
});
afterAll(() => api?.close());

it('an unbanned key is served within a second when the authorizer cache is off; show names the ban and its end first', async () => {
  const noon = Date.UTC(2033, 8, 9, 12, 0, 0);
  await setDayCounters(api, keyId, noon, { d: 5, banUntil: noon / 1000 + 900 });
  expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('429 key_banned');
  const shown = await runLocalAdmin(deps, 'keys', 'show', keyId);
  expect(shown.out).toContain(`BANNED until 2033-09-09T12:15:00.000Z (\`keys unban ${keyId}\` lifts it)`);
  const lifted = await runLocalAdmin(deps, 'keys', 'unban', keyId);
  expect(lifted).toMatchObject({ code: 0, err: '' });
  // No cache to wait for, and the warm function asks storage again once its second of trust is over.
  api.clock.set(() => noon + MIN_BAN_RECHECK_MS);
  expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('200');
  expect((await runLocalAdmin(deps, 'keys', 'show', keyId)).out).not.toMatch(/BANNED|Pending/);
}, 60_000);

it('a spent day is shown with its end, and `keys unban` starts the day again', async () => {
  const later = Date.UTC(2033, 8, 10, 9, 0, 0);
  await setDayCounters(api, keyId, later, { d: 10_000 });
  expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');
  const shown = await runLocalAdmin(deps, 'keys', 'show', keyId);
  expect(shown.out).toContain(`DAY SPENT until 2033-09-11T00:00:00.000Z (\`keys unban ${keyId}\` lifts it)`);
  const lifted = await runLocalAdmin(deps, 'keys', 'unban', keyId);
  expect(lifted.out).toMatch(new RegExp(`^Lifted today's spent quota of ${keyId}`));
  api.clock.set(() => later + MIN_BAN_RECHECK_MS);
  expect(await codeOf(await api.call('/pets?limit=1', { key }))).toBe('200');
  expect((await runLocalAdmin(deps, 'keys', 'show', keyId)).out).not.toMatch(/DAY SPENT/);
}, 60_000);

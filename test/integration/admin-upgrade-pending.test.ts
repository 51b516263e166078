/**
 * A Free key that spent its day, upgraded while forgetting its spent day (the standing write) fails: the change is
 * reported as made (its `Moved` line), with what is pending and the one command that finishes it; the key is still
 * refused until that command runs (the tool does not claim otherwise), and after it the key is served. Over HTTP
 * through the local gateway with the template's authorizer cache TTL, on the test's clock; the admin tool runs
 * `--local` against the same DynamoDB Local.
 */
import { expect, it } from 'vitest';
import { PLANS } from '../../contract/plans.ts';
import { runLocalAdmin } from '../helpers/admin.ts';
import { codeOf, setDayCounters, cachedAdminFixture } from '../helpers/key-standing.ts';
import { StorageFaults } from '../helpers/storage-faults.ts';

const fixture = cachedAdminFixture('free');
const { key, keyId } = fixture;

it('a spent Free key upgraded while the standing write fails: `Moved`, the printed next command, then 200', async () => {
  const noon = Date.UTC(2033, 3, 5, 12, 0, 0);
  await setDayCounters(fixture.api, keyId, noon, { d: PLANS.free.limits!.perDay });
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');
  fixture.api.clock.set(() => noon + 61_000);
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');

  const faults = new StorageFaults();
  const deps = faults.around(fixture.deps);
  faults.failNext('store.clearStandingPart', 'error');
  const moved = await runLocalAdmin(deps, 'keys', 'set-plan', keyId, 'pro');
  expect(moved.code).toBe(1);
  expect(moved.out).toMatch(new RegExp(`^Moved ${keyId} +active +pro `));
  expect(moved.out).toMatch(/^Pending: forgetting its spent day at the gateway failed/m);
  const next = /run `(keys [^`]+)`/.exec(moved.err)?.[1];
  expect(next).toBe(`keys reconcile ${keyId}`);
  // Until it runs, the gateway still refuses the key, and `keys show` says a change is pending.
  fixture.api.clock.set(() => noon + 122_000);
  expect(await codeOf(await fixture.api.call('/pets?limit=1', { key }))).toBe('429 quota_exceeded');
  expect((await runLocalAdmin(deps, 'keys', 'show', keyId)).out).toMatch(/Pending: .*`keys reconcile /);

  const finished = await runLocalAdmin(deps, ...next!.split(' '));
  expect(finished).toMatchObject({ code: 0, err: '' });
  expect(finished.out).toMatch(/forgot its spent day at the gateway \(1000 of 10000 used today\)/);
  fixture.api.clock.set(() => noon + 183_000);
  const res = await fixture.api.call('/pets?limit=1', { key });
  expect(await codeOf(res)).toBe('200');
  expect(res.headers.get('x-ratelimit-limit')).toBe(String(PLANS.pro.limits!.perMinute));
}, 60_000);

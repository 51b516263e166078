/**
 * `keys rotate --overlap <minutes>`: the old secret keeps working for a bounded time after a rotation, so a wrong id
 * or a customer slow to deploy is not an outage; the key's current record still decides for it (a revoke or ban
 * during the overlap refuses both secrets), and it ends at the overlap's end. Over HTTP through the local gateway
 * (uncached authorizer), the admin tool `--local` on the API's clock.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdminOnApiClock } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { codeOf } from '../helpers/key-standing.ts';

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdminOnApiClock());
});
afterAll(() => api?.close());

const T0 = Date.UTC(2034, 3, 3, 9, 0, 0);
const status = async (key: string) => codeOf(await api.call('/pets?limit=1', { key }));

async function newKey(plan = 'pro') {
  const r = await runLocalAdmin(deps, 'keys', 'create', '--owner', 'overlap', '--plan', plan, '--another', '--json');
  return JSON.parse(r.out) as { keyId: string; key: string };
}
async function rotated(keyId: string, ...args: string[]) {
  const r = await runLocalAdmin(deps, 'keys', 'rotate', keyId, ...args, '--json');
  expect(r.err).toBe('');
  return JSON.parse(r.out) as { key: string; oldSecretUntil: string | null };
}

it('keeps the old secret working for the overlap, then refuses it; without --overlap it is refused at once', async () => {
  api.clock.set(() => T0);
  const { keyId, key: old } = await newKey();
  const human = await runLocalAdmin(deps, 'keys', 'rotate', keyId, '--overlap', '10');
  expect(human.out).toMatch(/the old secret keeps working until 2034-04-03T09:10:00.000Z \(--overlap 10\)/);
  const fresh = /New API key \(shown once\): (\S+)/.exec(human.out)![1]!;
  expect([await status(old), await status(fresh)]).toEqual(['200', '200']);
  api.clock.set(() => T0 + 9 * 60_000);
  expect(await status(old)).toBe('200');
  api.clock.set(() => T0 + 10 * 60_000);
  expect([await status(old), await status(fresh)]).toEqual(['401 unauthorized', '200']);

  // A rotation without it ends the secret it replaces at once; an overlap still running from before keeps its end.
  api.clock.set(() => T0 + 20 * 60_000);
  const { key: third } = await rotated(keyId, '--overlap', '30');
  const { key: fourth, oldSecretUntil } = await rotated(keyId);
  expect(oldSecretUntil).toBeNull();
  expect([await status(fresh), await status(third), await status(fourth)]).toEqual(['200', '401 unauthorized', '200']);
  api.clock.set(() => T0 + 50 * 60_000);
  expect([await status(fresh), await status(fourth)]).toEqual(['401 unauthorized', '200']);
}, 60_000);

it("during the overlap the key's record decides for both secrets: a revoke refuses both, a ban bans both", async () => {
  api.clock.set(() => T0);
  const a = await newKey();
  const { key: a2 } = await rotated(a.keyId, '--overlap', '60');
  expect((await runLocalAdmin(deps, 'keys', 'ban', a.keyId, '--minutes', '5')).code).toBe(0);
  expect([await status(a.key), await status(a2)]).toEqual(['429 key_banned', '429 key_banned']);
  expect((await runLocalAdmin(deps, 'keys', 'unban', a.keyId)).code).toBe(0);
  expect([await status(a.key), await status(a2)]).toEqual(['200', '200']);
  expect((await runLocalAdmin(deps, 'keys', 'revoke', a.keyId)).code).toBe(0);
  expect([await status(a.key), await status(a2)]).toEqual(['401 unauthorized', '401 unauthorized']);
  // Restored within the overlap, both work again; the history says what each rotation allowed.
  expect((await runLocalAdmin(deps, 'keys', 'restore', a.keyId)).code).toBe(0);
  expect([await status(a.key), await status(a2)]).toEqual(['200', '200']);
  const history = await runLocalAdmin(deps, 'keys', 'history', a.keyId);
  expect(history.out).toMatch(
    /rotate --overlap 60 {2}by .*: rotated; the old secret is accepted until 2034-04-03T10:00:00.000Z/,
  );
}, 60_000);

it('refuses an overlap past a day, before anything is written', async () => {
  const { keyId, key } = await newKey();
  const r = await runLocalAdmin(deps, 'keys', 'rotate', keyId, '--overlap', '1441');
  expect(r).toMatchObject({ code: 1, err: 'error: --overlap must be whole minutes from 0 to 1,440' });
  expect(await status(key)).toBe('200');
});

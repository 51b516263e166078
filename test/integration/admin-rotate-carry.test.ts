/**
 * Rotations keep what they printed: an earlier secret whose overlap runs is carried to each new secret until its end,
 * whether the next rotation is another admin's, a rerun after a kill, or this admin's own; two admins rotating at once
 * end with one current secret and the overlap the first one printed, and the second is told who rotated and when.
 * Also the create that finished and is run again, and the terms (expiry, scope) an admin sets. Over HTTP through the
 * local gateway (uncached authorizer), the admin tool `--local` on the API's clock.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdminOnApiClock } from '../helpers/admin.ts';
import { interleaved } from '../helpers/admin-interleaved.ts';
import type { TestApi } from '../helpers/api.ts';
import { codeOf } from '../helpers/key-standing.ts';

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdminOnApiClock());
});
afterAll(() => api?.close());

const T0 = Date.UTC(2034, 5, 1, 9, 0, 0);
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
const status = async (key: string) => codeOf(await api.call('/pets?limit=1', { key }));
const statuses = (...keys: string[]) => Promise.all(keys.map(status));

/** `keys create --owner <owner> --plan pro <args>`. */
const create = (owner: string, args: string[] = [], d = deps) =>
  runLocalAdmin(d, 'keys', 'create', '--owner', owner, '--plan', 'pro', ...args);
async function newKey(owner: string, d = deps) {
  const r = await create(owner, ['--json'], d);
  expect(r.err).toBe('');
  return JSON.parse(r.out) as { keyId: string; key: string };
}
async function rotated(keyId: string, args: string[] = [], d = deps) {
  const r = await runLocalAdmin(d, 'keys', 'rotate', keyId, ...args, '--json');
  expect(r.err).toBe('');
  return JSON.parse(r.out) as {
    key: string;
    oldSecretUntil: string | null;
    carriedOverlaps: string[];
    endedOverlaps: string[];
  };
}
/** Bob's `keys <command> <key> <theirs>` lands between the read and the write of alice's `… <mine>` on a new key. */
async function raced(command: string, owner: string, theirs: string, mine: string) {
  api.clock.set(() => T0);
  const { keyId } = await newKey(owner);
  const racing = interleaved(deps, (id) => runLocalAdmin(deps, 'keys', command, id, theirs, '--actor', 'bob'));
  return { keyId, answer: await runLocalAdmin(racing, 'keys', command, keyId, mine, '--actor', 'alice') };
}
const shown = async (keyId: string) =>
  JSON.parse((await runLocalAdmin(deps, 'keys', 'show', keyId, '--json')).out) as { overlaps?: { until: string }[] };

it('a second rotation carries a running overlap to the new secret, until the end the first one printed', async () => {
  api.clock.set(() => T0);
  const { keyId, key: a } = await newKey('carry');
  const first = await rotated(keyId, ['--overlap', '60']);
  expect(first.oldSecretUntil).toBe(at(60));
  api.clock.set(() => T0 + 5 * 60_000);
  const human = await runLocalAdmin(deps, 'keys', 'rotate', keyId);
  expect(human.code).toBe(0);
  expect(human.out).toContain(`Earlier secrets still accepted, as their rotations said: until ${at(60)}.`);
  const c = /New API key \(shown once\): (\S+)/.exec(human.out)![1]!;
  // The first rotation's secret is refused (this rotation gave it no overlap); the customer's old one still works.
  expect(await statuses(a, first.key, c)).toEqual(['200', '401 unauthorized', '200']);
  expect((await shown(keyId)).overlaps).toEqual([{ until: at(60) }]);
  api.clock.set(() => T0 + 60 * 60_000);
  expect(await statuses(a, c)).toEqual(['401 unauthorized', '200']);
  const history = await runLocalAdmin(deps, 'keys', 'history', keyId);
  expect(history.out).toContain(`rotated; the old secret is refused; earlier secrets still accepted until ${at(60)}`);
}, 60_000);

it('overlaps add up to three; --end-overlaps refuses them at once', async () => {
  api.clock.set(() => T0);
  const { keyId, key: a } = await newKey('carry-many');
  const b = await rotated(keyId, ['--overlap', '60']);
  const c = await rotated(keyId, ['--overlap', '30']);
  expect(c.carriedOverlaps).toEqual([at(60)]);
  const d = await rotated(keyId, ['--overlap', '10']);
  expect(await statuses(a, b.key, c.key, d.key)).toEqual(['200', '200', '200', '200']);
  const refused = await runLocalAdmin(deps, 'keys', 'rotate', keyId, '--overlap', '5');
  expect(refused.code).toBe(1);
  expect(refused.err).toContain(`already has 3 earlier secrets accepted (until ${at(60)}, ${at(30)}, ${at(10)})`);
  expect(await status(d.key)).toBe('200');
  const e = await rotated(keyId, ['--end-overlaps']);
  expect(e.endedOverlaps).toEqual([at(60), at(30), at(10)]);
  expect(await statuses(a, b.key, c.key, d.key, e.key)).toEqual([
    '401 unauthorized',
    '401 unauthorized',
    '401 unauthorized',
    '401 unauthorized',
    '200',
  ]);
  expect((await shown(keyId)).overlaps ?? []).toEqual([]);
}, 60_000);

it('two admins rotating at once: one current secret, the overlap the first printed, the second told who and when', async () => {
  api.clock.set(() => T0);
  const { keyId, key: a } = await newKey('two-admins');
  let other: Awaited<ReturnType<typeof rotated>> | undefined;
  const racing = interleaved(deps, async (id) => {
    other = await rotated(id, ['--overlap', '10', '--actor', 'bob']);
  });
  const mine = await runLocalAdmin(racing, 'keys', 'rotate', keyId, '--overlap', '30', '--actor', 'alice');
  expect(mine.code).toBe(1);
  expect(mine.err).toContain(
    `key ${keyId} was rotated by another command while this one ran (keys rotate --overlap 10 by bob at`,
  );
  expect(mine.out).toBe('');
  expect(await statuses(a, other!.key)).toEqual(['200', '200']);
  expect((await shown(keyId)).overlaps).toEqual([{ until: at(10) }]);
  // With --json, the next step it names only reads: the history that says what the other admin did.
  const again = interleaved(deps, (id) => rotated(id));
  const json = await runLocalAdmin(again, 'keys', 'rotate', keyId, '--json');
  expect(JSON.parse(json.err)).toMatchObject({ next: `npm run admin -- keys history ${keyId} --local` });
}, 60_000);

it('a rotation killed after its write, then run again, keeps the customer on the overlap it promised', async () => {
  api.clock.set(() => T0);
  const { keyId, key: a } = await newKey('killed');
  const killed: AdminDeps = {
    ...deps,
    store: {
      ...deps.store,
      async replaceHash(...args) {
        await deps.store.replaceHash(...args);
        throw Object.assign(new Error('killed after the write (test)'), { name: 'TimeoutError' });
      },
    },
  };
  const first = await runLocalAdmin(killed, 'keys', 'rotate', keyId, '--overlap', '60');
  expect(first.code).toBe(1);
  expect(first.out).toBe('');
  // The admin never saw the new secret; the same command again gives one, and the old secret keeps its hour.
  api.clock.set(() => T0 + 2 * 60_000);
  const again = await rotated(keyId, ['--overlap', '60']);
  expect(again.carriedOverlaps).toEqual([at(60)]);
  expect(await statuses(a, again.key)).toEqual(['200', '200']);
  api.clock.set(() => T0 + 61 * 60_000);
  expect(await statuses(a, again.key)).toEqual(['401 unauthorized', '200']);
}, 60_000);

it('a create run again after it finished makes no second key unless asked; the refusal names a read', async () => {
  api.clock.set(() => T0);
  const first = await newKey('rerun');
  const again = await create('rerun', ['--json']);
  expect(again.code).toBe(1);
  const err = JSON.parse(again.err) as { error: string; next: string };
  expect(err.error).toContain(`${first.keyId} was created for rerun on pro at ${at(0)}`);
  expect(err.next).toBe(`npm run admin -- keys show ${first.keyId} --local`);
  const listed = await runLocalAdmin(deps, 'keys', 'list', '--owner', 'rerun', '--json');
  expect((JSON.parse(listed.out) as { keys: unknown[] }).keys).toHaveLength(1);
  const second = await create('rerun', ['--another']);
  expect(second.code).toBe(0);
  api.clock.set(() => T0 + 16 * 60_000);
  expect((await create('rerun')).code).toBe(0);
}, 60_000);

it('set-plan racing another admin says what the other did, who and when', async () => {
  const { answer: mine } = await raced('set-plan', 'plan-race', 'business', 'free');
  expect(mine.code).toBe(1);
  expect(mine.err).toContain('was moved to business');
  expect(mine.err).toContain(`keys set-plan business by bob at ${at(0)}`);
  // Both asked for the same plan: the second is told it was already moved there, and by whom.
  const { answer: r } = await raced('set-plan', 'plan-same', 'business', 'business');
  expect(r.code).toBe(0);
  expect(r.out).toMatch(
    /No change: .* another command moved it there while this one ran \(keys set-plan business by bob/,
  );
}, 60_000);

it('create --expires and --scope, set-expiry and set-scope: written with their history entries', async () => {
  api.clock.set(() => T0);
  const r = await create('terms', ['--scope', 'read', '--expires', '30d', '--json']);
  expect(r.code).toBe(0);
  const k = JSON.parse(r.out) as { keyId: string; scope?: string; validUntil?: number };
  expect(k).toMatchObject({ scope: 'read', validUntil: T0 / 1000 + 30 * 86_400 });
  expect((await runLocalAdmin(deps, 'keys', 'set-expiry', k.keyId, '2034-07-01')).out).toContain(
    'now expires at 2034-07-01T00:00:00.000Z',
  );
  expect((await runLocalAdmin(deps, 'keys', 'set-expiry', k.keyId, '2034-07-01')).out).toContain('No change');
  expect((await runLocalAdmin(deps, 'keys', 'set-scope', k.keyId, 'all')).out).toContain('may call every operation');
  expect((await runLocalAdmin(deps, 'keys', 'set-expiry', k.keyId, 'never')).out).toContain('never expires');
  const history = (await runLocalAdmin(deps, 'keys', 'history', k.keyId)).out;
  expect(history).toContain('create --plan pro --scope read --expires 2034-07-01T09:00:00.000Z');
  expect(history).toContain('set-expiry 2034-07-01T00:00:00.000Z');
  expect(history).toContain('set-scope all');
  expect(history).toContain('set-expiry never');
  const bad = await runLocalAdmin(deps, 'keys', 'set-expiry', k.keyId, 'tomorrow');
  expect(bad).toMatchObject({ code: 1 });
  expect(bad.err).toContain('takes a date (2027-01-31');
  const past = await create('terms', ['--expires', '2020-01-01']);
  expect(past.err).toContain('--expires must be in the future');
}, 60_000);

it('set-expiry racing another admin says what the other set, who and when; the check key takes no terms', async () => {
  const { keyId, answer: mine } = await raced('set-expiry', 'expiry-race', '60d', '30d');
  expect(mine.code).toBe(1);
  expect(mine.err).toContain(
    `the expiry of ${keyId} was changed by another command while this one ran (keys set-expiry`,
  );
  expect(mine.err).toContain('by bob at');
  const shownKey = JSON.parse((await runLocalAdmin(deps, 'keys', 'show', keyId, '--json')).out) as {
    validUntil: number;
  };
  expect(shownKey.validUntil).toBe(T0 / 1000 + 60 * 86_400);
  const check = await create('pre-traffic-check', ['--scope', 'read']);
  expect(check.code).toBe(1);
  expect(check.err).toContain('take no scope or expiry');
});

it('a create run again to finish a key gives it the terms this run asked for', async () => {
  api.clock.set(() => T0);
  const stopped: AdminDeps = {
    ...deps,
    store: {
      ...deps.store,
      replaceHash: () => Promise.reject(Object.assign(new Error('killed (test)'), { name: 'TimeoutError' })),
    },
  };
  const first = await create('finish-terms', [], stopped);
  expect(first.code).toBe(1);
  const again = await create('finish-terms', ['--scope', 'read', '--expires', '30d', '--json']);
  expect(again.code).toBe(0);
  expect(JSON.parse(again.out)).toMatchObject({ finished: true, scope: 'read', validUntil: T0 / 1000 + 30 * 86_400 });
});

it('an --end-overlaps that loses a race says the earlier secrets still work', async () => {
  api.clock.set(() => T0);
  const { keyId, key: a } = await newKey('end-race');
  await rotated(keyId, ['--overlap', '60']);
  const racing = interleaved(deps, (id) => rotated(id, ['--actor', 'bob']));
  const mine = await runLocalAdmin(racing, 'keys', 'rotate', keyId, '--end-overlaps');
  expect(mine.code).toBe(1);
  expect(mine.err).toContain(`1 earlier secret(s) are still accepted (until ${at(60)})`);
  expect(await status(a)).toBe('200');
});

/**
 * `keys list` at scale: served by the keys table's listing index on DynamoDB Local, never a Scan. A page of one plan's
 * keys reads no more items than it returns (plus an empty answer per partition it passes); owners match exactly and
 * case-insensitively. (The 100,000-key measurement is `npm run bench -- listing`.)
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import { keyAdmin, type AdminDeps } from '../../lib/admin/service.ts';
import { listKeys } from '../../lambdas/storage/key-listing.ts';
import { seedKeyTable } from '../../bench/lib/seed-keys.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin());
});
afterAll(() => api?.close());

it('lists by plan, owner (exact, any case) and status, a page at a time, reading what it returns', async () => {
  let t = Date.UTC(2030, 0, 1);
  const admin = keyAdmin({ ...deps, now: () => (t += 1000) });
  const ids: Record<string, string[]> = { business: [], free: [], acme: [] };
  for (let i = 0; i < 60; i++) ids.free!.push((await admin.create({ owner: `hobby-${i}`, plan: 'free' })).record.keyId);
  for (let i = 0; i < 7; i++)
    ids.business!.push((await admin.create({ owner: `corp-${i}`, plan: 'business' })).record.keyId);
  // One owner in three spellings (owners match in any case), so the second and third are asked for as more keys.
  for (const owner of ['Acme', 'ACME', 'acme'])
    ids.acme!.push((await admin.create({ owner, plan: 'pro', another: true })).record.keyId);
  await admin.create({ owner: 'acme#2', plan: 'pro' });
  await admin.create({ owner: 'acmeco', plan: 'pro' });
  await admin.revoke(ids.acme![0]!);

  // One plan: five of the seven Business keys, then the rest; each page reads what it returns.
  const first = await deps.store.listPage({ plan: 'business' }, 5);
  expect(first.records).toHaveLength(5);
  expect(first.read).toBeLessThanOrEqual(2 * first.records.length);
  const second = await deps.store.listPage({ plan: 'business' }, 5, first.next);
  // (The test API's own Business development key is listed too.)
  const business = [...first.records, ...second.records].filter((r) => r.owner !== 'local-development');
  expect(business.map((r) => r.keyId).sort()).toEqual([...ids.business!].sort());
  expect(second.next).toBeUndefined();

  // Owners: exactly, in any case; not `acme#2` nor `acmeco`.
  const acme = await runLocalAdmin(deps, 'keys', 'list', '--owner', 'aCmE', '--json');
  const listed = JSON.parse(acme.out) as { keys: KeyRecord[]; next: string | null };
  expect(listed.keys.map((k) => k.keyId).sort()).toEqual([...ids.acme!].sort());
  expect(listed.next).toBeNull();
  const active = JSON.parse(
    (await runLocalAdmin(deps, 'keys', 'list', '--owner', 'ACME', '--status', 'active', '--json')).out,
  );
  expect(active.keys.map((k: KeyRecord) => k.keyId).sort()).toEqual(ids.acme!.slice(1).sort());
  const revoked = await runLocalAdmin(deps, 'keys', 'list', '--status', 'revoked');
  expect(revoked.out.split('\n').filter((l) => l.startsWith('key_'))).toHaveLength(1);

  // Paging in the terminal: a `More:` line with the cursor to pass.
  const page = await runLocalAdmin(deps, 'keys', 'list', '--plan', 'free', '--limit', '50');
  const more = /^More: add --after (\S+)$/m.exec(page.out);
  expect(more).not.toBeNull();
  const rest = await runLocalAdmin(deps, 'keys', 'list', '--plan', 'free', '--limit', '50', '--after', more![1]!);
  expect(rest.out.split('\n').filter((l) => /^(key|dev)_/.test(l))).toHaveLength(11);
  expect((await runLocalAdmin(deps, 'keys', 'list', '--status', 'gone')).err).toBe(
    'error: unknown status "gone" (use active or revoked)',
  );
  expect((await runLocalAdmin(deps, 'keys', 'list', '--after', 'bm90LWEtY3Vyc29y')).err).toMatch(/^error: --after: /);
});

it('on a seeded table (the bench at a small size), a page of one plan reads at most 2 items per key it lists', async () => {
  const n = 2_000;
  await seedKeyTable(api.storage.ddb, api.storage.tables.keys, 0, n, 4);
  for (const plan of ['business', 'free'] as const) {
    const page = await listKeys(api.storage, { plan }, 100);
    expect(page.records).toHaveLength(100);
    expect(page.read / page.records.length, plan).toBeLessThanOrEqual(2);
  }
});

it('keys reindex gives records an earlier release listed otherwise (or not at all) their place in it, once', async () => {
  const record = {
    hash: 'f'.repeat(64),
    keyId: 'key_beforeindex0001',
    owner: 'Old Timer',
    plan: 'pro',
    status: 'active',
    createdAt: '2020-01-01T00:00:00.000Z',
    version: 3,
  };
  await api.storage.doc.send(new PutCommand({ TableName: api.storage.tables.keys, Item: record }));
  const find = async () =>
    (
      JSON.parse((await runLocalAdmin(deps, 'keys', 'list', '--owner', 'old timer', '--json')).out) as {
        keys: KeyRecord[];
      }
    ).keys;
  expect(await find()).toEqual([]);
  const first = await runLocalAdmin(deps, 'keys', 'reindex');
  expect(first.out).toMatch(
    /^Gave [1-9]\d* key record\(s\) the listing index's attributes and \d+ history entr(y|ies) the by-day index's$/,
  );
  expect((await find()).map((k) => k.keyId)).toEqual([record.keyId]);
  expect((await runLocalAdmin(deps, 'keys', 'reindex')).out).toBe(
    "Gave 0 key record(s) the listing index's attributes and 0 history entries the by-day index's",
  );
});

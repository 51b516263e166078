/**
 * `keys list` on a table of thousands of keys, on DynamoDB Local: a page reads what it prints; `--limit` is what is
 * printed; pages go through every key of a plan once; the `--after` cursor carries no key hash and one that does not
 * belong to the listing is refused with one `error:` line; and the revoked keys release 3357b0c kept apart (in one
 * `purge` partition, waiting for its purge of their API keys) are listed again once `keys reindex` runs. (The
 * 100,000-key measurement is `npm run bench -- --only=listing`.)
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { listKeys, listing, ownerKey } from '../../lambdas/storage/key-listing.ts';
import { cursorFilter, writeCursor } from '../../lambdas/storage/list-cursor.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import { seedKeyTable, seededKey } from '../../bench/lib/seed-keys.ts';
import type { TestApi } from '../helpers/api.ts';

const KEYS = 3_000;

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin());
  await seedKeyTable(api.storage.ddb, api.storage.tables.keys, 0, KEYS, 4);
  // An owner with a few keys, written in either case.
  for (let j = 0; j < 5; j++) {
    const record = { ...seededKey(KEYS + 10 + j), owner: j % 2 ? 'LEAVER-3' : 'leaver-3' };
    await api.storage.doc.send(
      new PutCommand({ TableName: api.storage.tables.keys, Item: { ...record, ...listing(record) } }),
    );
  }
}, 120_000);
afterAll(() => api?.close());

const keyLines = (out: string) => out.split('\n').filter((l) => /^(key|dev)_/.test(l));
const listJson = async (...args: string[]) => {
  const r = await runLocalAdmin(deps, 'keys', 'list', ...args, '--json');
  return { ...r, page: (r.out ? JSON.parse(r.out) : undefined) as { keys: KeyRecord[]; next: string | null } };
};

it('prints as many keys as --limit says', async () => {
  const five = await runLocalAdmin(deps, 'keys', 'list', '--limit', '5');
  expect(five.code).toBe(0);
  expect(keyLines(five.out)).toHaveLength(5);
  expect(five.out).toMatch(/^More: add --after \S+$/m);
  const revoked = await runLocalAdmin(deps, 'keys', 'list', '--status', 'revoked', '--limit', '7');
  expect(keyLines(revoked.out)).toHaveLength(7);
});

it('reads at most 2 items per key it prints', async () => {
  for (const [filter, limit] of [
    [{ plan: 'business' }, 100],
    [{}, 5],
    [{ status: 'revoked' }, 20],
    [{ owner: 'OWNER-42' }, 100],
  ] as const) {
    const page = await listKeys(api.storage, filter, limit);
    expect(page.records.length, JSON.stringify(filter)).toBeGreaterThan(0);
    expect(page.read, JSON.stringify(filter)).toBeLessThanOrEqual(2 * page.records.length);
  }
});

it('pages through every key of a plan exactly once', async () => {
  const seen: string[] = [];
  let after: string | null = null;
  let pages = 0;
  do {
    const { page, code } = await listJson('--plan', 'business', '--limit', '100', ...(after ? ['--after', after] : []));
    expect(code).toBe(0);
    expect(page.keys.length).toBeLessThanOrEqual(100);
    seen.push(...page.keys.map((k) => k.keyId));
    after = page.next;
    expect(++pages).toBeLessThan(20);
  } while (after);
  const business = Array.from({ length: KEYS }, (_, i) => seededKey(i)).filter((r) => r.plan === 'business');
  const listed = seen.filter((id) => !id.startsWith('dev_'));
  expect(new Set(listed).size).toBe(listed.length);
  expect(listed.sort()).toEqual(business.map((r) => r.keyId).sort());
});

it('an owner page continues from its cursor within that owner, reading what it prints', async () => {
  const first = await deps.store.listPage({ owner: 'Leaver-3' }, 1);
  expect(first.records.map((r) => r.owner.toLowerCase())).toEqual(['leaver-3']);
  const rest = await deps.store.listPage({ owner: 'leaver-3' }, 100, first.next);
  expect(rest.records).toHaveLength(4);
  expect(rest.records.every((r) => r.owner.toLowerCase() === 'leaver-3')).toBe(true);
  expect(rest.read).toBeLessThanOrEqual(2 * rest.records.length);
  expect(new Set([...first.records, ...rest.records].map((r) => r.keyId)).size).toBe(1 + rest.records.length);
});

it('the cursor carries no key hash, and one that is not this listing’s gets one error line and exit 1, like every input error', async () => {
  const { page } = await listJson('--plan', 'business', '--limit', '3');
  const cursor = page.next!;
  // Printed as `c` and base64url, so it never starts with the `-` of an option.
  expect(cursor.startsWith('c')).toBe(true);
  const decoded = Buffer.from(cursor.slice(1), 'base64url').toString('latin1');
  expect(decoded).not.toMatch(/[0-9a-f]{64}/);
  for (const k of page.keys) expect(decoded).not.toContain(k.hash ?? 'no hash in a view');

  const other = await runLocalAdmin(deps, 'keys', 'list', '--plan', 'pro', '--after', cursor);
  expect(other).toMatchObject({ code: 1, out: '' });
  expect(other.err).toMatch(/^error: --after: this cursor belongs to a listing with other filters/);
  expect(other.err.split('\n')).toHaveLength(1);

  const chars = [...cursor];
  chars[20] = chars[20] === 'A' ? 'B' : 'A';
  for (const bad of [chars.join(''), cursor.slice(0, -6), 'bm90LWEtY3Vyc29y']) {
    const r = await runLocalAdmin(deps, 'keys', 'list', '--plan', 'business', '--after', bad);
    expect({ code: r.code, out: r.out }, bad).toEqual({ code: 1, out: '' });
    expect(r.err, bad).toMatch(/^error: --after: not a cursor of this listing/);
  }
  const json = await listJson('--plan', 'free', '--after', cursor);
  expect(json.code).toBe(1);
  expect(JSON.parse(json.err)).toMatchObject({ error: expect.stringMatching(/^--after: this cursor belongs/) });
});

it('a cursor re-tagged for another filter, with a made-up sort key, or printed for another stage or table is refused in one line', async () => {
  const table = api.storage.tables.keys;
  const { page } = await listJson('--plan', 'business', '--limit', '3');
  const body = JSON.parse(Buffer.from(page.next!.slice(1), 'base64url').subarray(12).toString()) as {
    p: number;
    s: string;
  };
  // An unfiltered listing's position, tagged for an owner's listing (the tag's key is no secret): its sort key is
  // another owner's, which DynamoDB answered with a raw ValidationException (BETWEEN with its bounds reversed).
  const owner = 'aaa-first-owner';
  const retagged = writeCursor({ p: 0, s: body.s }, cursorFilter({ owner: ownerKey(owner) }), table);
  const forged = writeCursor({ p: 0, s: 'zzz' }, cursorFilter({ plan: 'business' }), table);
  const elsewhere = writeCursor(body, cursorFilter({ plan: 'business' }), `${table}-production`);
  for (const [args, message] of [
    [
      ['--owner', owner, '--after', retagged],
      /^--after: not a cursor of this listing \(its position is not one of this listing\): copy the whole `More:`/,
    ],
    [
      ['--plan', 'business', '--after', forged],
      /^--after: not a cursor of this listing \(its position is not one of this listing\): copy the whole `More:`/,
    ],
    [
      ['--plan', 'business', '--after', elsewhere],
      /^--after: not a cursor of this listing on this stage \(.*printed on another stage or table/,
    ],
  ] as const) {
    const r = await listJson(...args);
    expect({ code: r.code, out: r.out }, args.join(' ')).toEqual({ code: 1, out: '' });
    expect(JSON.parse(r.err), args.join(' ')).toMatchObject({ error: expect.stringMatching(message) });
    expect(r.err).not.toMatch(/ValidationException/);
  }
  // The same body, tagged for this table, is this listing's own position: it goes on.
  const own = await listJson(
    '--plan',
    'business',
    '--limit',
    '3',
    '--after',
    writeCursor(body, cursorFilter({ plan: 'business' }), table),
  );
  expect(own.code, own.err).toBe(0);
  expect(own.page.keys).toHaveLength(3);
});

it('lists a revoked key release 3357b0c kept in its purge partition once `keys reindex` moves it beside its plan', async () => {
  const record = {
    ...seededKey(KEYS + 1),
    owner: 'old-layout',
    status: 'revoked',
    revokedAt: '2030-06-01T00:00:00.000Z',
    // What 3357b0c's record of such a key held: the API key of its own its purge had yet to delete.
    apiGatewayKeyId: 'apikeyold',
  };
  await api.storage.doc.send(
    new PutCommand({
      TableName: api.storage.tables.keys,
      Item: { ...record, listKey: 'purge', listSort: `${record.revokedAt}\u0001${record.keyId}` },
    }),
  );
  expect((await listJson('--owner', 'old-layout')).page.keys).toEqual([]);
  expect((await runLocalAdmin(deps, 'keys', 'reindex')).out).toMatch(/^Gave [1-9]\d* key record/);
  const listed = (await listJson('--owner', 'old-layout', '--status', 'revoked')).page.keys;
  expect(listed.map((k) => k.keyId)).toEqual([record.keyId]);
  // What the record still says of its gateway past is nobody's business now: not shown.
  expect(listed[0]).not.toHaveProperty('apiGatewayKeyId');
});

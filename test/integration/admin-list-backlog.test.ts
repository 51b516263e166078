/**
 * `keys list` right after a mass revocation, before anyone runs `keys purge`, on DynamoDB Local: the keys waiting for
 * purge are listed like any other and never read to be filtered out, so a page reads what it prints; `--limit` is
 * what is printed; the `--after` cursor carries no key hash and one that does not belong to the listing is refused
 * with one `error:` line. (The 100,000-key measurement is `npm run bench -- --only=backlog`.)
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { backlogKey, measureBacklog, seedBacklog } from '../../bench/phases/purge-backlog.ts';
import { seedKeyTable, seededKey } from '../../bench/lib/seed-keys.ts';
import { ownerKey } from '../../lambdas/storage/key-listing.ts';
import { cursorFilter, writeCursor } from '../../lambdas/storage/list-cursor.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';

const KEYS = 3_000;
const BACKLOG = 600;

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin());
  await seedKeyTable(api.storage.ddb, api.storage.tables.keys, 0, KEYS, 4);
  await seedBacklog(api.storage.ddb, api.storage.tables.keys, 0, BACKLOG, 4);
}, 120_000);
afterAll(() => api?.close());

const keyLines = (out: string) => out.split('\n').filter((l) => /^(key|dev)_/.test(l));
const listJson = async (...args: string[]) => {
  const r = await runLocalAdmin(deps, 'keys', 'list', ...args, '--json');
  return { ...r, page: (r.out ? JSON.parse(r.out) : undefined) as { keys: KeyRecord[]; next: string | null } };
};

it('prints as many keys as --limit says, with a purge backlog in the table', async () => {
  const five = await runLocalAdmin(deps, 'keys', 'list', '--limit', '5');
  expect(five.code).toBe(0);
  expect(keyLines(five.out)).toHaveLength(5);
  expect(five.out).toMatch(/^More: add --after \S+$/m);
  const revoked = await runLocalAdmin(deps, 'keys', 'list', '--status', 'revoked', '--limit', '7');
  expect(keyLines(revoked.out)).toHaveLength(7);
});

it('reads at most 2 items per key it prints, and purge reads the backlog it has work for', async () => {
  const rows = await measureBacklog(api.storage);
  for (const row of rows.slice(0, 4)) {
    expect(row.printed, row.query).toBeGreaterThan(0);
    expect(row.read, row.query).toBeLessThanOrEqual(2 * row.printed);
  }
  expect(rows[0]).toMatchObject({ query: 'keys list --plan business --limit 100', printed: 100 });
  expect(rows[1]).toMatchObject({ printed: 5 });
  const due = await deps.store.listDue(Date.UTC(2031, 0, 1));
  const seededDue = Array.from({ length: KEYS }, (_, i) => seededKey(i)).filter(
    (r) => r.status === 'revoked' && r.apiGatewayKeyId,
  );
  expect(due.map((r) => r.keyId).sort()).toEqual(
    [...seededDue, ...Array.from({ length: BACKLOG }, (_, i) => backlogKey(i))].map((r) => r.keyId).sort(),
  );
});

it('pages through every key of a plan exactly once, the keys awaiting purge included', async () => {
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
  const business = [
    ...Array.from({ length: KEYS }, (_, i) => seededKey(i)),
    ...Array.from({ length: BACKLOG }, (_, i) => backlogKey(i)),
  ].filter((r) => r.plan === 'business');
  const listed = seen.filter((id) => !id.startsWith('dev_'));
  expect(new Set(listed).size).toBe(listed.length);
  expect(listed.sort()).toEqual(business.map((r) => r.keyId).sort());
});

it('an owner page continues from its cursor within that owner, reading what it prints', async () => {
  const first = await deps.store.listPage({ owner: 'LEAVER-3' }, 1);
  expect(first.records.map((r) => r.owner)).toEqual(['leaver-3']);
  const rest = await deps.store.listPage({ owner: 'leaver-3' }, 100, first.next);
  expect(rest.records.length).toBeGreaterThan(0);
  expect(rest.records.every((r) => r.owner === 'leaver-3')).toBe(true);
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

it('purge still finds a record left in the one purge partition of before, and reindex moves it beside its plan', async () => {
  const record = { ...backlogKey(BACKLOG + 1), owner: 'old-layout' };
  await api.storage.doc.send(
    new PutCommand({
      TableName: api.storage.tables.keys,
      Item: { ...record, listKey: 'purge', listSort: `${record.revokedAt}\u0001${record.keyId}` },
    }),
  );
  expect((await deps.store.listDue(Date.UTC(2031, 0, 1))).map((r) => r.keyId)).toContain(record.keyId);
  expect((await listJson('--owner', 'old-layout')).page.keys).toEqual([]);
  expect((await runLocalAdmin(deps, 'keys', 'reindex')).out).toMatch(/^Gave [1-9]\d* key record/);
  expect((await listJson('--owner', 'old-layout')).page.keys.map((k) => k.keyId)).toEqual([record.keyId]);
  expect((await deps.store.listDue(Date.UTC(2031, 0, 1))).map((r) => r.keyId)).toContain(record.keyId);
});

it('marks a key whose change is not fully applied PENDING, and names the command that finishes it', async () => {
  const made = await runLocalAdmin(deps, 'keys', 'create', '--owner', 'half-done', '--plan', 'pro', '--json');
  const { keyId } = JSON.parse(made.out) as { keyId: string };
  // As a set-plan whose reconcile failed leaves it: the record written, not yet reconciled.
  await deps.store.update((await deps.store.getById(keyId))!, { plan: 'business' });
  const listed = await runLocalAdmin(deps, 'keys', 'list', '--owner', 'half-done');
  expect(listed.code).toBe(0);
  expect(keyLines(listed.out)).toEqual([expect.stringMatching(new RegExp(`^${keyId} .*  PENDING$`))]);
  expect(listed.out).toMatch(/^1 of these key\(s\) PENDING: .*run `keys reconcile --all`$/m);
  const json = await listJson('--owner', 'half-done');
  expect(json.page.keys).toEqual([expect.objectContaining({ keyId, pending: true })]);

  expect((await runLocalAdmin(deps, 'keys', 'reconcile', keyId)).code).toBe(0);
  const after = await runLocalAdmin(deps, 'keys', 'list', '--owner', 'half-done');
  expect(after.out).not.toMatch(/PENDING/);
});

/**
 * The `--after` cursor of `keys list`, over the CLI on DynamoDB Local: it continues only the listing that printed it
 * (same filters, same stage and table). A cursor from another filter, another stage's or table's listing, cut short
 * or edited, re-tagged for another filter, or with a made-up position is refused in one `error:` line, exit 1 like
 * every input error, naming the listing to start over (without --after); never a raw ValidationException, never a
 * page that silently skips keys.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';
import { ownerKey } from '../../lambdas/storage/key-listing.ts';
import { cursorFilter, writeCursor } from '../../lambdas/storage/list-cursor.ts';
import { keyAdmin, type AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin());
  const admin = keyAdmin(deps);
  for (let i = 0; i < 4; i++) {
    await admin.create({ owner: `cursor-a-${i}`, plan: 'pro' });
    await admin.create({ owner: 'cursor-owner', plan: 'pro', another: true });
    await admin.create({ owner: `cursor-b-${i}`, plan: 'free' });
  }
}, 60_000);
afterAll(() => api?.close());

const list = async (on: AdminDeps, ...args: string[]) => {
  const r = await runLocalAdmin(on, 'keys', 'list', ...args, '--json');
  return { ...r, page: (r.code === 0 ? JSON.parse(r.out) : undefined) as { keys: unknown[]; next: string | null } };
};

/** What a cursor holds behind its `c` and 12-byte tag: the filter's digest and the position. */
const bodyOf = (cursor: string) =>
  JSON.parse(Buffer.from(cursor.slice(1), 'base64url').subarray(12).toString()) as { f: string; p: number; s?: string };

/** Refused as an input error: exit 1, nothing on stdout, one JSON error naming the listing to start over. */
async function refused(on: AdminDeps, args: string[], why: RegExp, startOver: string) {
  const r = await runLocalAdmin(on, 'keys', 'list', ...args, '--json');
  const label = args.join(' ');
  expect({ code: r.code, out: r.out }, label).toEqual({ code: 1, out: '' });
  expect(r.err.split('\n'), label).toHaveLength(1);
  expect(r.err, label).not.toMatch(/ValidationException/);
  const { error, next } = JSON.parse(r.err) as { error: string; next: string };
  expect(error, label).toMatch(why);
  expect(error, label).toMatch(
    /: copy the whole `More:` line of the page before, or start over: run `keys list[^`]*`$/,
  );
  expect(next, label).toBe(`npm run admin -- ${startOver} --local`);
  // The human form says the same in one line.
  const human = await runLocalAdmin(on, 'keys', 'list', ...args);
  expect(human.err, label).toBe(`error: ${error}`);
}

it('continues its own listing, and never starts with the `-` of an option', async () => {
  const first = await list(deps, '--plan', 'pro', '--limit', '3');
  const seen = [...first.page.keys];
  let next = first.page.next;
  while (next) {
    expect(next.startsWith('c')).toBe(true);
    const more = await list(deps, '--plan', 'pro', '--limit', '3', '--after', next);
    expect(more.code, more.err).toBe(0);
    seen.push(...more.page.keys);
    next = more.page.next;
  }
  expect(seen.length).toBeGreaterThanOrEqual(8);
  expect(new Set(seen.map((k) => (k as { keyId: string }).keyId)).size).toBe(seen.length);
});

it('a cursor of another filter is refused, naming this listing to start over', async () => {
  const { next } = (await list(deps, '--plan', 'pro', '--limit', '2')).page;
  await refused(
    deps,
    ['--plan', 'free', '--after', next!],
    /^--after: this cursor belongs to a listing with other filters/,
    'keys list --plan free',
  );
  await refused(
    deps,
    ['--plan', 'pro', '--status', 'active', '--limit', '2', '--after', next!],
    /other filters/,
    'keys list --plan pro --status active --limit 2',
  );
  await refused(
    deps,
    ['--plan', 'pro', '--owner', 'cursor-owner', '--after', next!],
    /other filters/,
    'keys list --plan pro --owner cursor-owner',
  );
});

it("a cursor printed on another stage's or table's listing is refused", async () => {
  // Another target: the same tool on a keys table of another name (another stage's stack, another local prefix).
  const tables = { ...deps.storage!.tables, keys: `${deps.storage!.tables.keys}-elsewhere` };
  const elsewhere: AdminDeps = { ...deps, store: createKeyAdminStore({ ...deps.storage!, tables }) };
  const { next } = (await list(deps, '--plan', 'pro', '--limit', '2')).page;
  await refused(
    elsewhere,
    ['--plan', 'pro', '--after', next!],
    /^--after: not a cursor of this listing on this stage \(changed, cut short, or printed on another stage or table\)/,
    'keys list --plan pro',
  );
  // And the other way round: that table's cursor (its tag) on this one.
  const theirs = writeCursor(bodyOf(next!), cursorFilter({ plan: 'pro' }), tables.keys);
  await refused(
    deps,
    ['--plan', 'pro', '--after', theirs],
    /printed on another stage or table/,
    'keys list --plan pro',
  );
});

it('a cursor cut short, edited or made up is refused', async () => {
  const { next } = (await list(deps, '--limit', '2')).page;
  const chars = [...next!];
  chars[20] = chars[20] === 'A' ? 'B' : 'A';
  for (const bad of [next!.slice(0, -6), chars.join(''), next!.slice(1), 'cbm90LWEtY3Vyc29y', 'c'])
    await refused(deps, ['--after', bad], /changed, cut short/, 'keys list');
  await refused(deps, ['--after', 'not a cursor!'], /not a cursor of this listing/, 'keys list');
});

it('a cursor re-tagged for another filter, or tagged with a made-up position, is refused, never a ValidationException', async () => {
  const table = deps.storage!.tables.keys;
  const { next } = (await list(deps, '--plan', 'pro', '--limit', '2')).page;
  const { p, s } = bodyOf(next!);
  const owner = cursorFilter({ owner: ownerKey('cursor-owner') });
  const pro = cursorFilter({ plan: 'pro' });
  const cases: Array<[string[], string, string]> = [
    // Another owner's position tagged for this owner's listing: DynamoDB answered BETWEEN with its bounds reversed.
    [['--owner', 'cursor-owner'], writeCursor({ p: 0, s: s! }, owner, table), 'keys list --owner cursor-owner'],
    // A partition the listing does not have.
    [['--plan', 'pro'], writeCursor({ p: 99 }, pro, table), 'keys list --plan pro'],
    [['--plan', 'pro'], writeCursor({ p: -1 }, pro, table), 'keys list --plan pro'],
    // Sort keys of no listing: not its shape, or its shape but longer than DynamoDB takes (1,024 bytes).
    [['--plan', 'pro'], writeCursor({ p, s: 'zzz' }, pro, table), 'keys list --plan pro'],
    [
      ['--plan', 'pro'],
      writeCursor({ p, s: `${'€'.repeat(500)}\u00012026-01-01T00:00:00Z\u0001key_0` }, pro, table),
      'keys list --plan pro',
    ],
  ];
  for (const [filter, cursor, startOver] of cases)
    await refused(
      deps,
      [...filter, '--after', cursor],
      /^--after: not a cursor of this listing \(its position is not one of this listing\)/,
      startOver,
    );
  // The same body tagged for this table is the listing's own position: it goes on.
  const own = await list(deps, '--plan', 'pro', '--limit', '2', '--after', writeCursor({ p, s: s! }, pro, table));
  expect(own.code, own.err).toBe(0);
  expect(own.page.keys).toHaveLength(2);
});

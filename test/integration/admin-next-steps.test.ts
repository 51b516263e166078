/**
 * The `next` a failure gives (--json) never names a command that changes or destroys what another admin did: the
 * three cases that once did, end to end on DynamoDB Local through the command line. The rule itself, on a table of
 * messages, is in test/unit/admin-cli.test.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import type { TestApi } from '../helpers/api.ts';

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin());
});
afterAll(() => api?.close());

/** A command expected to fail: its JSON error line. */
async function failing(...args: string[]): Promise<{ error: string; next: string | null }> {
  const r = await runLocalAdmin(deps, ...args, '--json');
  expect(r.code, r.out).not.toBe(0);
  return JSON.parse(r.err.split('\n').at(-1)!) as { error: string; next: string | null };
}

it('a pasted secret: the listing that finds its id, never a create', async () => {
  const made = JSON.parse(
    (await runLocalAdmin(deps, 'keys', 'create', '--owner', 'next-acme', '--plan', 'free', '--json')).out,
  ) as { key: string };
  const r = await failing('keys', 'show', made.key);
  expect(r.next).toBe('npm run admin -- keys list --local');
  expect(r.error).not.toContain(made.key);
  expect(r.error).not.toContain('`keys create');
});

it('a cursor of another listing given to keys list: this listing started over', async () => {
  for (const owner of ['next-a', 'next-b'])
    expect((await runLocalAdmin(deps, 'keys', 'create', '--owner', owner, '--plan', 'pro')).code).toBe(0);
  const page = JSON.parse((await runLocalAdmin(deps, 'keys', 'list', '--plan', 'pro', '--limit', '1', '--json')).out);
  expect(page.next).toBeTruthy();
  const r = await failing('keys', 'list', '--plan', 'free', '--after', page.next);
  expect(r.next).toBe('npm run admin -- keys list --plan free --local');
});

it("a create that met another's key of the same owner and plan: that key's show, never a rotate or a second create", async () => {
  const first = JSON.parse(
    (await runLocalAdmin(deps, 'keys', 'create', '--owner', 'next-merged', '--plan', 'pro', '--json')).out,
  ) as { keyId: string };
  const r = await failing('keys', 'create', '--owner', 'next-merged', '--plan', 'pro');
  expect(r.next).toBe(`npm run admin -- keys show ${first.keyId} --local`);
  expect(r.next).not.toMatch(/rotate|create/);
});

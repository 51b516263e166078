import { expect, it } from 'vitest';
import { runAdmin } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';

it('tells an admin whose DynamoDB does not answer where to look, in one line and a non-zero exit', async () => {
  const unreachable = () => Promise.reject(new UnavailableError('ECONNREFUSED'));
  const deps = { store: { list: unreachable, listPage: unreachable, getById: unreachable } } as unknown as AdminDeps;
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    ['keys', 'list', '--local'],
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    async () => deps,
  );
  expect(code).toBe(1);
  expect(out).toEqual([]);
  expect(err).toHaveLength(1);
  expect(err[0]).toMatch(/^error: DynamoDB did not answer \(ECONNREFUSED\)\. With --local: is `npm start` running/);
});

it('accepts only the stages the CDK app deploys, and says which before connecting to anything', async () => {
  const err: string[] = [];
  let built = false;
  const code = await runAdmin(
    ['keys', 'list', '--stage', 'dev'],
    { out: () => undefined, err: (l) => err.push(l) },
    () => {
      built = true;
      return Promise.reject(new Error('not reached'));
    },
  );
  expect({ code, built, err }).toEqual({
    code: 1,
    built: false,
    err: [`error: unknown stage "dev" (use ${STAGE_NAMES.join(' or ')})`],
  });
  expect(STAGE_NAMES).toEqual(Object.keys(STAGES));
});

/** Runs the CLI with a target that records whether anything was connected (so nothing can have been written). */
async function refused(argv: string[]): Promise<{ code: number; connected: boolean; err: string[] }> {
  const err: string[] = [];
  let connected = false;
  const code = await runAdmin(argv, { out: () => undefined, err: (l) => err.push(l) }, () => {
    connected = true;
    return Promise.reject(new Error('not reached'));
  });
  return { code, connected, err };
}

it.each([
  [
    ['keys', 'create', '--owner', 'acme\nkey_forged  active  free', '--plan', 'free', '--local'],
    /--owner must be one line/,
  ],
  [['keys', 'create', '--owner', 'acme\u202e', '--plan', 'free', '--local'], /--owner must be one line/],
  [['keys', 'create', '--owner', 'x'.repeat(129), '--plan', 'free', '--local'], /at most 128 characters/],
  [['keys', 'create', '--owner', 'a', '--owner', 'b', '--plan', 'free', '--local'], /--owner is given more than once/],
  [['keys', 'create', '--owner', 'a', '--plan', 'free', '--plan', 'pro', '--local'], /--plan is given more than once/],
  [['keys', 'list', '--plan', 'bogus', '--local'], /unknown plan "bogus"/],
  [['keys', 'list', '--owner', 'a\nb', '--local'], /--owner must be one line/],
  [['keys', 'show', 'key_1', '--owner', 'acme', '--local'], /keys show takes no --owner/],
  [['keys', 'show', 'key_1', 'key_2', '--local'], /unexpected argument "key_2"/],
  [['keys', 'revoke', 'key 1\n', '--local'], /is not a key id/],
  [['keys', 'set-plan', 'key_1', 'bogus', '--local'], /unknown plan "bogus"/],
  [['keys', 'reindex', '--local', '--local'], /--local is given more than once/],
])('refuses %j with one error line and a non-zero exit, before connecting to anything', async (argv, message) => {
  const { code, connected, err } = await refused(argv);
  expect(code).not.toBe(0);
  expect(connected).toBe(false);
  expect(err).toHaveLength(1);
  expect(err[0]).toMatch(/^error: /);
  expect(err[0]).toMatch(message);
});

it('says in its help that a rotated secret keeps working until cached authorizer results expire', async () => {
  const out: string[] = [];
  await runAdmin(['--help'], { out: (l) => out.push(l), err: () => undefined }, () => Promise.reject(new Error()));
  expect(out.join('\n')).toMatch(
    /keys rotate <id>.*old secret keeps working until cached authorizer\s+results expire/s,
  );
  expect(out.join('\n')).not.toMatch(/stops working at once/);
});

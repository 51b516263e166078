/**
 * What the admin tool says in the small cases an admin meets: a second revoke, a missing plan, an unknown flag, a
 * secret pasted where an id goes, a banned key shown, a revoked key's usage, that set-plan waits on the authorizer
 * cache, and a storage outage on a stage. On DynamoDB Local (`--local`).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import { USAGE, runAdmin } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin());
});
afterAll(() => api?.close());

const run = (...args: string[]) => runLocalAdmin(deps, ...args);
// Each test makes its own key for the same owner and plan: `--another` says so (else a create within 15 minutes is a rerun).
const created = async (plan = 'pro') =>
  JSON.parse((await run('keys', 'create', '--owner', 'messages', '--plan', plan, '--another', '--json')).out) as {
    key: string;
    keyId: string;
  };

it('a second revoke says the key was already revoked, when and by whom', async () => {
  const { keyId } = await created();
  const first = await run('keys', 'revoke', keyId);
  expect(first.out).toMatch(/^Revoked /);
  const revokedAt = (JSON.parse((await run('keys', 'show', keyId, '--json')).out) as { revokedAt: string }).revokedAt;
  const second = await run('keys', 'revoke', keyId);
  expect(second.code).toBe(0);
  expect(second.out).toMatch(
    new RegExp(
      `^${keyId} was already revoked at ${revokedAt} \\(nothing changed\\): keys revoke by local:\\S+ at \\S+: revoked`,
    ),
  );
});

it('a missing --plan says it is required, not `unknown plan ""`', async () => {
  const r = await run('keys', 'create', '--owner', 'x');
  expect(r).toMatchObject({ code: 1, err: 'error: --plan is required (free, pro, business, enterprise)' });
});

it('an unknown flag or a flag without its value is one `error:` line and exit 1, like every input error', async () => {
  expect(await run('keys', 'list', '--bogus')).toMatchObject({
    code: 1,
    err: 'error: unknown option --bogus (see --help)',
  });
  expect(await run('keys', 'list', '--plan')).toMatchObject({
    code: 1,
    err: 'error: --plan needs a value (see --help)',
  });
});

it('a secret pasted as an id is named for what it is', async () => {
  const { key } = await created();
  const r = await run('keys', 'show', key);
  expect(r.code).toBe(1);
  expect(r.err).toMatch(
    /^error: that is an API key secret, not a key id: use its id \(key_…\), which `keys list` prints \(as its create did\), and treat the secret as exposed/,
  );
  expect(r.err).not.toContain(key);
});

it('a secret pasted with what surrounded it (a header, a leading space) is named for what it is and never echoed', async () => {
  const { key } = await created();
  const body = key.slice('ask2_'.length);
  for (const pasted of [`Bearer ${key}`, ` ${key}`, `"${key}"`]) {
    const human = await run('keys', 'show', pasted);
    expect(human.code).toBe(1);
    expect(human.err).toMatch(/^error: that is an API key secret, not a key id/);
    expect(human.err).not.toContain(body.slice(0, 16));
    const json = await run('keys', 'revoke', pasted, '--json');
    expect(json.code).toBe(1);
    const e = JSON.parse(json.err) as { error: string; next: string | null };
    expect(e.error).toMatch(/^that is an API key secret, not a key id/);
    expect(json.err).not.toContain(body.slice(0, 16));
  }
  // Where the tool quotes what it was given (a plan, a stray argument), a secret there is not quoted either.
  const { keyId } = await created();
  for (const args of [
    ['keys', 'set-plan', keyId, `Bearer ${key}`],
    ['keys', 'show', keyId, ` ${key}`],
    ['keys', 'list', '--status', key],
  ]) {
    const r = await run(...args, '--json');
    expect(r.code).toBe(1);
    expect(r.err).not.toContain(body.slice(0, 16));
    expect(r.err).toContain('<an API key secret>');
  }
});

it('keys show shows a ban; keys usage says a key is revoked', async () => {
  const { keyId } = await created();
  const now = Date.now();
  const dayStart = Math.floor(now / 1000) - (Math.floor(now / 1000) % 86_400);
  const banUntil = Math.floor(now / 1000) + 900;
  await api.storage.doc.send(
    new PutCommand({
      TableName: api.storage.tables.state,
      Item: { ...shardKey(keyId, dayStart, 0), ms: dayStart, m: 0, d: 1, banUntil },
    }),
  );
  const shown = await run('keys', 'show', keyId);
  expect(shown.out).toContain(
    `BANNED until ${new Date(banUntil * 1000).toISOString()} (\`keys unban ${keyId}\` lifts it)`,
  );
  await run('keys', 'revoke', keyId);
  const usage = await run('keys', 'usage', keyId);
  expect(usage.out.split('\n')[0]).toMatch(new RegExp(`^${keyId} \\(pro, REVOKED at \\d{4}-\\d\\d-\\d\\dT`));
});

it('set-plan and its --help say the authorizer cache delays the change', async () => {
  const { keyId } = await created();
  expect((await run('keys', 'set-plan', keyId, 'business')).out).toMatch(/once cached authorizer results expire/);
  expect(USAGE).toMatch(
    /keys set-plan <id> <plan>[^\n]*\n\s+the gateway applies it once cached authorizer results expire/,
  );
});

it('a storage outage on a stage says where to look for that target, with the command to run again, and never `npm start`', async () => {
  const down = async () => {
    throw new UnavailableError('ECONNREFUSED');
  };
  const outage = { ...deps, store: { ...deps.store, getById: down } } as AdminDeps;
  for (const json of [false, true]) {
    const err: string[] = [];
    const code = await runAdmin(
      ['keys', 'show', 'key_abc', '--stage', 'staging', ...(json ? ['--json'] : [])],
      { out: () => {}, err: (l) => err.push(l) },
      async () => outage,
    );
    expect(code).toBe(1);
    const message = json ? (JSON.parse(err[0]!) as { error: string; next: string }) : { error: err[0]! };
    expect(message.error).toMatch(
      /DynamoDB did not answer \(ECONNREFUSED\) on stage staging: check the network and your AWS credentials/,
    );
    expect(message.error).not.toMatch(/npm start|--local/);
    if (json) expect(message).toMatchObject({ next: 'npm run admin -- keys show key_abc --stage staging --json' });
  }
});

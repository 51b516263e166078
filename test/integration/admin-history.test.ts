/**
 * Every admin change is attributed and kept: `keys history <id>` prints who (the AWS principal on a stage, the OS
 * user locally, `--actor` beside either), what (the command, the record before and after), when and what it did,
 * with no secret or hash in it; changes can be undone (`keys restore` within its window), and production revoke and
 * rotate ask first. Over the CLI on the fake stage (control-plane-world.ts) and on DynamoDB Local (`--local`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { osUser } from '../../lib/admin/audit.ts';
import { runAdmin, type Io } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import { made } from '../helpers/admin-scenarios.ts';
import type { TestApi } from '../helpers/api.ts';
import { STAGE_PRINCIPAL, controlPlaneWorld, recordsOf } from '../helpers/control-plane-world.ts';

let api: TestApi;
let localDeps: AdminDeps;
beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
});
afterAll(() => api?.close());

/** One admin command on `deps` with the target given (`--stage production`…), and what a terminal would answer. */
async function run(deps: AdminDeps, args: string[], ask?: Io['ask']) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    args,
    { out: (l) => out.push(l), err: (l) => err.push(l), ...(ask ? { ask } : {}) },
    async () => deps,
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

interface Entry {
  command: string;
  actor: string;
  principal: string;
  at: string;
  stage: string;
  before?: { plan: string; status: string };
  after: { plan: string; status: string };
  result: string;
}

describe('keys history on the fake stage: the AWS principal', () => {
  it('names who made each change, what it was before and after, and when; --actor is kept beside the principal', async () => {
    const w = controlPlaneWorld(localDeps);
    const stage = (...args: string[]) => run(w.deps, [...args, '--stage', 'staging']);
    const created = await stage('keys', 'create', '--owner', w.owner, '--plan', 'business', '--json');
    expect(created.code).toBe(0);
    const { keyId, key } = JSON.parse(created.out) as { keyId: string; key: string };
    w.fake.t += 60_000;
    expect((await stage('keys', 'set-plan', keyId, 'free')).code).toBe(0);
    w.fake.t += 60_000;
    expect((await stage('keys', 'ban', keyId, '--minutes', '20')).code).toBe(0);
    expect((await stage('keys', 'unban', keyId)).code).toBe(0);
    expect((await stage('keys', 'revoke', keyId, '--actor', 'Bob (support, ticket 4711)')).code).toBe(0);
    expect((await stage('keys', 'restore', keyId)).code).toBe(0);
    expect((await stage('keys', 'rotate', keyId)).code).toBe(0);

    const history = await stage('keys', 'history', keyId, '--json');
    expect(history.code).toBe(0);
    const { entries } = JSON.parse(history.out) as { entries: Entry[] };
    expect(entries.map((e) => [e.command, e.actor, e.principal])).toEqual([
      ['create --plan business', STAGE_PRINCIPAL, STAGE_PRINCIPAL],
      ['set-plan free', STAGE_PRINCIPAL, STAGE_PRINCIPAL],
      ['ban --minutes 20', STAGE_PRINCIPAL, STAGE_PRINCIPAL],
      ['unban', STAGE_PRINCIPAL, STAGE_PRINCIPAL],
      ['revoke', 'Bob (support, ticket 4711)', STAGE_PRINCIPAL],
      ['restore', STAGE_PRINCIPAL, STAGE_PRINCIPAL],
      ['rotate', STAGE_PRINCIPAL, STAGE_PRINCIPAL],
    ]);
    const [create, move, , , revoke, restore] = entries;
    expect(create!.before).toBeUndefined();
    expect([move!.before!.plan, move!.after.plan]).toEqual(['business', 'free']);
    expect(move!.result).toBe('moved business (1000/min, 100000/day) → free (60/min, 1000/day)');
    expect([revoke!.before!.status, revoke!.after.status, restore!.after.status]).toEqual([
      'active',
      'revoked',
      'active',
    ]);
    expect(entries.every((e) => e.stage === 'staging')).toBe(true);
    expect(entries.map((e) => e.at)).toEqual(entries.map((e) => e.at).sort());
    expect(Date.parse(move!.at)).toBe(Date.parse(create!.at) + 60_000);
    // Nothing in it can be replayed: no secret, no hash of the secret (either of them), no write id.
    const record = (await recordsOf(w))[0]!;
    for (const secretish of [key, hashKey(key), record.hash, record.writeId!])
      expect(history.out).not.toContain(secretish);
    expect(history.out).not.toMatch(/"hash"|writeId/);

    const human = await stage('keys', 'history', keyId);
    expect(human.out.split('\n')).toHaveLength(7);
    expect(human.out).toContain(`revoke  by Bob (support, ticket 4711) (as ${STAGE_PRINCIPAL}): revoked`);
    expect(human.out).toContain(`set-plan free  by ${STAGE_PRINCIPAL}: moved business (1000/min`);
  }, 60_000);

  it('a principal that cannot be named changes nothing, and the command says what to check', async () => {
    const w = controlPlaneWorld(localDeps);
    const id = await made(w, 'pro');
    const anonymous: AdminDeps = {
      ...w.deps,
      whoami: async () => {
        throw Object.assign(new Error('The security token included in the request is expired'), {
          name: 'ExpiredTokenException',
        });
      },
    };
    const r = await run(anonymous, ['keys', 'revoke', id, '--stage', 'staging']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error: could not tell who you are \(ExpiredTokenException: .*nothing was changed/);
    expect((await recordsOf(w))[0]!.status).toBe('active');
  });

  it('a change whose write failed leaves no entry, and the one that landed has exactly one', async () => {
    const w = controlPlaneWorld(localDeps);
    const id = await made(w, 'pro');
    w.storage.failNext('store.update', 'error');
    const failed = await run(w.deps, ['keys', 'set-plan', id, 'business', '--stage', 'staging']);
    expect(failed.code).toBe(1);
    // Applied, its answer lost: the same command again finds it done, and writes nothing (no second entry).
    w.storage.failNext('store.update', 'lost');
    const lost = await run(w.deps, ['keys', 'set-plan', id, 'business', '--stage', 'staging']);
    expect(lost.err).toMatch(/run the same command again/);
    expect((await run(w.deps, ['keys', 'set-plan', id, 'business', '--stage', 'staging'])).code).toBe(0);
    const { entries } = JSON.parse((await run(w.deps, ['keys', 'history', id, '--stage', 'staging', '--json'])).out);
    expect(entries.map((e: Entry) => e.command)).toEqual(['create --plan pro', 'set-plan business']);
  });
});

describe('keys history on DynamoDB Local: the OS user', () => {
  it('names the OS user running the tool, or --actor beside it', async () => {
    const created = await runLocalAdmin(localDeps, 'keys', 'create', '--owner', 'acme', '--plan', 'pro', '--json');
    const { keyId } = JSON.parse(created.out) as { keyId: string };
    expect((await runLocalAdmin(localDeps, 'keys', 'set-plan', keyId, 'business', '--actor', 'carol')).code).toBe(0);
    const h = await runLocalAdmin(localDeps, 'keys', 'history', keyId);
    expect(h.code).toBe(0);
    expect(osUser()).toMatch(/^local:./);
    expect(h.out.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^\\S+Z  create --plan pro  by ${osUser()}: created on pro \\(300/min`)),
      expect.stringMatching(
        new RegExp(`^\\S+Z  set-plan business  by carol \\(as ${osUser()}\\): moved pro .* → business`),
      ),
    ]);
    expect((await runLocalAdmin(localDeps, 'keys', 'history', 'key_00000000000000ff')).out).toBe(
      'No recorded changes of key_00000000000000ff.',
    );
    // A name that would forge a line of the history is refused before anything is connected or written.
    const forged = await runLocalAdmin(localDeps, 'keys', 'revoke', keyId, '--actor', 'carol\n2030-01-01  unban  by x');
    expect(forged).toMatchObject({
      code: 1,
      err: 'error: --actor must be one line of visible text, at most 128 characters',
    });
    expect((await runLocalAdmin(localDeps, 'keys', 'history', keyId)).out.split('\n')).toHaveLength(2);
    expect((await runLocalAdmin(localDeps, 'keys', 'history', '--help')).out).toMatch(
      /^Usage: npm run admin -- keys history \[<id>\] .*\n\nChanges made to keys, oldest first: with <id>, that key's;[\s\S]*when, the command, who/,
    );
  });
});

describe('keys restore', () => {
  it('brings a revoked key back with its secret, within the window; after it, refuses and says what to do', async () => {
    const created = await runLocalAdmin(localDeps, 'keys', 'create', '--owner', 'acme', '--plan', 'pro', '--json');
    const { keyId, key } = JSON.parse(created.out) as { keyId: string; key: string };
    expect((await api.call('/pets?limit=1', { key })).status).toBe(200);
    const revoked = await runLocalAdmin(localDeps, 'keys', 'revoke', keyId);
    expect(revoked.out).toContain(`\`keys restore ${keyId}\` within 7 days undoes it`);
    expect((await api.call('/pets?limit=1', { key })).status).toBe(401);
    const restored = await runLocalAdmin(localDeps, 'keys', 'restore', keyId);
    expect(restored).toMatchObject({ code: 0, err: '' });
    expect(restored.out).toMatch(new RegExp(`^Restored ${keyId}  active`));
    expect((await api.call('/pets?limit=1', { key })).status).toBe(200);
    expect((await runLocalAdmin(localDeps, 'keys', 'restore', keyId)).out).toBe(`${keyId} is active (nothing changed)`);

    await runLocalAdmin(localDeps, 'keys', 'revoke', keyId);
    const late = { ...localDeps, now: () => Date.now() + 8 * 86_400_000 };
    const refused = await runLocalAdmin(late, 'keys', 'restore', keyId);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/more than 7 days ago: it can no longer be restored; create a new key/);
    expect((await api.call('/pets?limit=1', { key })).status).toBe(401);
  });
});

describe('production revoke and rotate ask first', () => {
  it('refuse without a terminal unless --yes; at a terminal, go ahead only when the key id is typed back', async () => {
    const w = controlPlaneWorld(localDeps);
    const id = await made(w, 'pro');
    const prod = (args: string[], ask?: Io['ask']) => run(w.deps, [...args, '--stage', 'production'], ask);
    const status = async () => (await recordsOf(w))[0]!.status;

    const script = await prod(['keys', 'revoke', id]);
    expect(script.code).toBe(1);
    expect(script.err).toBe(
      'error: keys revoke on production asks for confirmation and there is no terminal to ask: add --yes to go ahead',
    );
    const questions: string[] = [];
    const wrong = await prod(['keys', 'revoke', id], async (q) => (questions.push(q), 'key_someoneelse'));
    expect(wrong).toMatchObject({ code: 1, err: 'error: not confirmed: nothing changed' });
    expect(questions[0]).toMatch(
      new RegExp(`^Revoke ${id} \\(owner ${w.owner}, plan pro\\) on production\\? .*Type the key id to confirm: $`),
    );
    expect(await status()).toBe('active');
    expect((await prod(['keys', 'rotate', id])).code).toBe(1);
    expect(await prod(['keys', 'revoke', id], async () => id)).toMatchObject({ code: 0 });
    expect(await status()).toBe('revoked');
    expect((await prod(['keys', 'restore', id])).code).toBe(0);
    expect((await prod(['keys', 'rotate', id, '--yes'])).code).toBe(0);
    // Staging asks nothing.
    expect((await run(w.deps, ['keys', 'revoke', id, '--stage', 'staging'])).code).toBe(0);
  });
});

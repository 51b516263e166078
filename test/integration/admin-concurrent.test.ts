/**
 * Two admins at once, over the CLI on DynamoDB Local: a second command landing while the first runs. Two rotations
 * of one key: the one that finds its secret already replaced stops (it printed no secret; the one printed works).
 * Two set-plans: the one that finds the key moved by the other stops instead of printing "Moved" over it. And a
 * set-plan of a revoked key is refused with nothing written.
 */
import { describe, expect, it } from 'vitest';
import { localAdminFixture, runLocalAdmin } from '../helpers/admin.ts';
import { interleaved } from '../helpers/admin-interleaved.ts';
import { made } from '../helpers/admin-scenarios.ts';
import { controlPlaneWorld } from '../helpers/control-plane-world.ts';

const local = localAdminFixture();

const created = async (plan = 'pro') =>
  JSON.parse(
    (await runLocalAdmin(local.deps, 'keys', 'create', '--owner', 'two-admins', '--plan', plan, '--another', '--json'))
      .out,
  ) as {
    key: string;
    keyId: string;
  };

/** `keys <command…>` run while another admin's `keys <other…>` lands between its read and its write: both results. */
async function racing(command: string[], other: string[]) {
  let second = { code: -1, out: '', err: '' };
  const first = await runLocalAdmin(
    interleaved(local.deps, async () => (second = await runLocalAdmin(local.deps, 'keys', ...other))),
    'keys',
    ...command,
  );
  return { first, other: second };
}

describe('two admins at once', () => {
  it('two rotations: the second to land prints no secret and says the other one replaced it; the secret printed works', async () => {
    const { key: original, keyId } = await created();
    const { first, other } = await racing(['rotate', keyId], ['rotate', keyId, '--json']);
    expect(other.code, other.err).toBe(0);
    const printed = (JSON.parse(other.out) as { key: string }).key;
    expect(first.code).toBe(1);
    expect(first.out, 'no secret printed').toBe('');
    expect(first.err).toMatch(
      new RegExp(`^error: key ${keyId} was rotated by another command while this one ran .*nothing changed here`),
    );
    expect(await local.status(printed)).toBe(200);
    expect(await local.status(original)).toBe(401);
  });

  it('two set-plans to different plans: the second to land does not print "Moved" over the first', async () => {
    const { keyId } = await created('pro');
    const { first, other } = await racing(['set-plan', keyId, 'free'], ['set-plan', keyId, 'business']);
    expect(other).toMatchObject({ code: 0, out: expect.stringMatching(/^Moved /) });
    expect(first.code).toBe(1);
    expect(first.out).not.toMatch(/Moved/);
    // The refusal names the other admin's command: what moved the key, by whom and when.
    const by =
      '\\(keys set-plan business by local:root at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: ' +
      'moved pro \\(300/min, 10000/day\\) → business \\(1000/min, 100000/day\\)\\)';
    expect(first.err).toMatch(
      new RegExp(
        `^error: key ${keyId} was moved to business \\(1000/min, 100000/day\\) by another command while this one ran ` +
          `${by}: nothing changed here; run \`keys set-plan ${keyId} free\` again if it should still move$`,
      ),
    );
    expect(JSON.parse((await runLocalAdmin(local.deps, 'keys', 'show', keyId, '--json')).out)).toMatchObject({
      plan: 'business',
    });
  });

  it('two set-plans to the same plan: one says "Moved", the other "No change" of the key as it now is', async () => {
    const { keyId } = await created('pro');
    const { first, other } = await racing(['set-plan', keyId, 'business'], ['set-plan', keyId, 'business']);
    expect(other).toMatchObject({ code: 0, out: expect.stringMatching(/^Moved /) });
    expect(first.code).toBe(0);
    expect(first.out).toMatch(
      new RegExp(
        `^No change: ${keyId} is already on business with these limits \\(nothing written\\): another command moved it ` +
          'there while this one ran \\(keys set-plan business by local:root at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: ' +
          'moved pro \\(300/min, 10000/day\\) → business \\(1000/min, 100000/day\\)\\)$',
      ),
    );
  });
});

it('set-plan of a revoked key is refused with nothing written', async () => {
  const w = controlPlaneWorld(local.deps);
  const id = await made(w, 'pro');
  expect((await runLocalAdmin(w.deps, 'keys', 'revoke', id)).code).toBe(0);
  const calls = w.storage.calls.length;
  const r = await runLocalAdmin(
    w.deps,
    'keys',
    'set-plan',
    id,
    'enterprise',
    '--per-minute',
    '700',
    '--per-day',
    '70000',
  );
  expect(r).toMatchObject({ code: 1, out: '' });
  expect(r.err).toBe(`error: key ${id} is revoked: only active keys change plan`);
  expect(
    w.storage.calls.slice(calls).filter((c) => !/^store\.(get|read|list)/.test(c)),
    'no write',
  ).toEqual([]);
});

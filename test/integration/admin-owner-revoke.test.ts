/**
 * `keys revoke --owner <owner>`: every active key of an owner revoked, each reported, and a run stopped at any step
 * (each of its storage calls failing in turn: a throttle, an error, an answer lost after it applied) converging
 * once the command its message names is run: every key of the owner revoked, none of anyone else's, and each revoke
 * once in the key's history. On DynamoDB Local through the world's counted, faultable ports (storage-faults.ts).
 */
import { parseArgs } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandArgs, Options } from '../../lib/admin/commands.ts';
import { adminContext } from '../../lib/admin/context.ts';
import { ownerActiveKeys, revokeOwner, revokeOwnerCommand, type OwnerRevoked } from '../../lib/admin/owner-revoke.ts';
import { PartialFailure } from '../../lib/admin/printed.ts';
import { AdminError, type AdminDeps } from '../../lib/admin/service.ts';
import { startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { controlPlaneWorld, recordsOf, type World } from '../helpers/control-plane-world.ts';
import type { StorageFault } from '../helpers/storage-faults.ts';

let api: TestApi;
let localDeps: AdminDeps;
beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
});
afterAll(() => api?.close());

/** One run as the CLI runs it: exit code, stdout, stderr (progress, then the error line), and the data printed. */
async function revokeRun(deps: AdminDeps, argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { owner: { type: 'string' }, yes: { type: 'boolean' } },
  });
  const err: string[] = [];
  const args: CommandArgs = {
    o: values as Options,
    rest: positionals,
    id: () => positionals[0]!,
    progress: (line) => err.push(line),
    answer: () => {},
  };
  try {
    const call = revokeOwnerCommand(args);
    const ctx = adminContext(deps);
    const out = await call({ revokeOwner: (owner, report) => revokeOwner(ctx, owner, report) });
    return { code: 0, out: out.human, data: out.data as OwnerRevoked, err: err.join('\n') };
  } catch (e) {
    if (e instanceof PartialFailure)
      return { code: 1, out: e.output.human, data: e.output.data as OwnerRevoked, err: [...err, e.message].join('\n') };
    if (e instanceof AdminError) return { code: 1, out: '', data: undefined, err: [...err, e.message].join('\n') };
    // Anything else escaping the command would be printed as an unexplained error: a test failure.
    throw e;
  }
}

/** The world's owner with three active keys, one revoked before, and another owner's key beside them. */
async function owned(w: World) {
  const ids = [];
  for (const plan of ['free', 'pro', 'business'] as const)
    ids.push((await w.admin.create({ owner: w.owner, plan })).record.keyId);
  // Each of another plan: a second key of one owner and plan minutes after the first is a create's rerun.
  const earlier = (await w.admin.create({ owner: w.owner, plan: 'enterprise', perMinute: 100, perDay: 1000 })).record
    .keyId;
  await w.admin.revoke(earlier);
  const other = (await w.admin.create({ owner: `${w.owner}-other`, plan: 'pro' })).record.keyId;
  return { ids, earlier, other };
}

/** What must hold once the owner's revoke has run through: the end state, and each revoke written once. */
async function converged(w: World, s: Awaited<ReturnType<typeof owned>>, label: string) {
  const records = await recordsOf(w);
  expect(
    records.map((r) => r.status),
    label,
  ).toEqual(records.map(() => 'revoked'));
  expect(records.map((r) => r.keyId).sort(), label).toEqual([...s.ids, s.earlier].sort());
  expect((await w.plain.store.getById(s.other))?.status, label).toBe('active');
  for (const id of [...s.ids, s.earlier])
    expect(
      (await w.plain.store.history(id)).filter((e) => e.command === 'revoke').length,
      `${label}: ${id}'s revokes`,
    ).toBe(1);
}

describe('keys revoke --owner', () => {
  it('revokes every active key of the owner, reports each, and leaves every other key alone', async () => {
    const w = controlPlaneWorld(localDeps);
    const s = await owned(w);
    const run = await revokeRun(w.deps, ['--owner', w.owner]);
    expect(run.code).toBe(0);
    expect(run.data!.keys.map((k) => [k.keyId, k.outcome]).sort()).toEqual(s.ids.map((id) => [id, 'revoked']).sort());
    const lines = run.out.split('\n');
    expect(lines.slice(0, 3).sort()).toEqual(
      s.ids.map((id, i) => `Revoked ${id} (${['free', 'pro', 'business'][i]})`).sort(),
    );
    expect(lines[3]).toBe(
      `${w.owner}: revoked 3 of 3 active key(s). Requests with them get 401 once cached authorizer results expire ` +
        '(up to 60 s in the cloud); `keys restore <id>` within 7 days undoes one.',
    );
    // Each key's line on stderr as it lands.
    expect(run.err.split('\n').sort()).toEqual(lines.slice(0, 3).sort());
    await converged(w, s, 'a clean run');

    const again = await revokeRun(w.deps, ['--owner', w.owner]);
    expect([again.code, again.out]).toEqual([0, `${w.owner} has no active keys (nothing changed)`]);
  });

  it('refuses an id beside --owner, and the pre-traffic check keys, before anything is connected', async () => {
    const w = controlPlaneWorld(localDeps);
    const both = await revokeRun(w.deps, ['key_abc', '--owner', w.owner]);
    expect(both.err).toBe('keys revoke takes a key id or --owner, not both: one key, or every key of an owner');
    const check = await revokeRun(w.deps, ['--owner', 'Pre-Traffic-Check']);
    expect(check.err).toMatch(
      /^the pre-traffic-check keys are the stage's pre-traffic check keys.*`keys list --owner pre-traffic-check`/,
    );
    expect(w.storage.calls).toEqual([]);
  });

  it('counts the owner’s active keys for a confirmation, from the listing alone', async () => {
    const w = controlPlaneWorld(localDeps);
    const s = await owned(w);
    expect((await ownerActiveKeys(w.deps.store, w.owner)).map((r) => r.keyId).sort()).toEqual([...s.ids].sort());
  });

  it('a key revoked meanwhile by another admin is reported already revoked, and written once', async () => {
    const w = controlPlaneWorld(localDeps);
    const s = await owned(w);
    // The listing still names it active when this run gets to it: another admin's revoke lands between the two.
    const store = w.deps.store;
    let first = true;
    const deps: AdminDeps = {
      ...w.deps,
      store: {
        ...store,
        getById: async (id) => {
          if (first && id === s.ids[1]) {
            first = false;
            await w.admin.revoke(id);
          }
          return store.getById(id);
        },
      },
    };
    const run = await revokeRun(deps, ['--owner', w.owner]);
    expect(run.code).toBe(0);
    expect(run.data!.keys.find((k) => k.keyId === s.ids[1])).toMatchObject({ outcome: 'already' });
    expect(run.out).toMatch(new RegExp(`${s.ids[1]} \\(pro\\) was already revoked at \\S+ \\(nothing changed\\)`));
    expect(run.out).toMatch(/revoked 2 of 3 active key\(s\), 1 already revoked\./);
    await converged(w, s, 'revoked meanwhile');
  });

  it('failing at each of its steps in turn, converges once the command its message names is run', async () => {
    const clean = controlPlaneWorld(localDeps);
    await owned(clean);
    const before = clean.storage.calls.length;
    expect((await revokeRun(clean.deps, ['--owner', clean.owner])).code).toBe(0);
    const steps = clean.storage.calls.slice(before);
    // The listing, then each key's read and write: the step list is the code's.
    expect(steps).toEqual(['store.listPage', ...Array(3).fill(['store.getById', 'store.update']).flat()]);

    for (let at = 1; at <= steps.length; at++)
      for (const mode of ['throttle', 'error', 'lost'] as StorageFault[]) {
        const w = controlPlaneWorld(localDeps);
        const s = await owned(w);
        w.storage.failAt(at, mode);
        const args = ['--owner', w.owner];
        let run = await revokeRun(w.deps, args);
        const first = run;
        const trail = [`${args.join(' ')} → ${run.code}: ${run.err}`];
        for (let i = 0; run.code !== 0 && i < 3; i++) {
          const named = /run `keys revoke ([^`]+)`/.exec(run.err);
          expect(named, trail.join('\n')).not.toBeNull();
          run = await revokeRun(w.deps, named![1]!.split(' '));
          trail.push(`${named![1]} → ${run.code}: ${run.err}`);
        }
        const label = `${mode} at call ${at} (${steps[at - 1]})\n${trail.join('\n')}`;
        expect(run.code, label).toBe(0);
        await converged(w, s, label);
        // A failing step stops the run short of exit 0, naming what finishes it, unless what failed was only an
        // answer lost after the revoke landed: read back, that key is said revoked, and the run is done.
        if (trail.length > 1) {
          expect(trail[0], label).toMatch(/run `keys revoke --owner \S+`/);
          // A key's step failing: the others are revoked and printed, that one is printed as not revoked.
          if (steps[at - 1] !== 'store.listPage')
            expect(
              first.out.split('\n').filter((l) => l.startsWith('NOT revoked: ')),
              label,
            ).toHaveLength(1);
        } else expect([mode, steps[at - 1]], label).toEqual(['lost', 'store.update']);
      }
  }, 300_000);
});

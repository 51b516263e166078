/**
 * `keys create` stopped anywhere: the process killed at each of its storage calls (before the call is sent, or after
 * it applied and before its answer is read: nothing of the command runs after that), or that call failing (throttled,
 * an error, its answer lost). Then the admin goes on as the output lets them: the command its error names; after a
 * kill, `keys show <id>` for a key id it printed (and the command that names), else the same create again. Every way,
 * the owner ends with exactly one key, the last secret printed works at the API (the authorizer allows it), every
 * other secret printed is refused, and no key is left that no shown secret works for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../lib/admin/cli.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { StorageFaults, type StorageFault } from '../helpers/storage-faults.ts';

let api: TestApi;
let deps: AdminDeps;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin());
});
afterAll(() => api?.close());

const createArgs = (owner: string) => ['keys', 'create', '--owner', owner, '--plan', 'pro', '--json'];
const status = async (key: string) => (await api.call('/pets?limit=1', { key, contract: false })).status;

type Kill = { at: number; when: 'before' | 'after' };

/** A fresh create's calls: its undelivered keys, its recent keys (a rerun?), the record, then the write under the secret. */
const FRESH_CREATE = ['listPage', 'listPage', 'put', 'replaceHash'];
/** A fresh create killed before the write that makes its shown secret work: a key no secret works for. */
const BEFORE_ITS_SECRET_WORKS: Kill = { at: FRESH_CREATE.indexOf('replaceHash') + 1, when: 'before' };

/**
 * `deps` whose store stops the command at its `at`th call, as a `kill -9` would: the call's promise never settles, so
 * nothing of the command runs after it. `calls` counts the calls (a run without a kill learns how many there are).
 */
function killable(kill?: Kill) {
  const calls: string[] = [];
  let died!: () => void;
  const dead = new Promise<'killed'>((resolve) => (died = () => resolve('killed')));
  const store = Object.fromEntries(
    Object.entries(deps.store).map(([name, f]) => [
      name,
      async (...args: unknown[]) => {
        calls.push(name);
        const here = kill?.at === calls.length;
        if (here && kill.when === 'before') return (died(), new Promise(() => {}));
        const out = await (f as (...a: unknown[]) => Promise<unknown>).apply(deps.store, args);
        if (here) return (died(), new Promise(() => {}));
        return out;
      },
    ]),
  ) as unknown as AdminDeps['store'];
  return { deps: { ...deps, store }, calls, dead };
}

/** Runs the admin tool on `on`, collecting what it printed, until it exits or is killed. */
async function runUntil(on: { deps: AdminDeps; dead: Promise<'killed'> }, args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const run = runAdmin([...args, '--local'], { out: (l) => out.push(l), err: (l) => err.push(l) }, async () => on.deps);
  const ended = await Promise.race([run, on.dead]);
  return { ended, out: out.join('\n'), err: err.join('\n') };
}

/** The secret and key id a `--json` create printed, if it printed anything. */
const printedKey = (out: string) => (out ? (JSON.parse(out) as { key: string; keyId: string }) : undefined);

/** What an admin runs next: the create `keys show` names for a key id printed, else the same create again. */
async function finish(owner: string, printed: { keyId: string } | undefined, shown: string[]) {
  let next = createArgs(owner);
  if (printed) {
    const show = await runLocalAdmin(deps, 'keys', 'show', printed.keyId);
    expect(show.code, show.err).toBe(0);
    const named = /run `(keys create [^`]+)`/.exec(show.out)?.[1];
    if (!named) return;
    next = [...named.split(' '), '--json'];
  }
  const again = await runLocalAdmin(deps, ...next);
  expect(again.code, again.err).toBe(0);
  shown.push(printedKey(again.out)!.key);
}

/** One key for the owner, usable, and of all the secrets shown only the last works. */
async function exactlyOneWorkingKey(owner: string, shown: string[], label: string) {
  const list = await runLocalAdmin(deps, 'keys', 'list', '--owner', owner, '--json');
  const { keys } = JSON.parse(list.out) as { keys: Array<{ status: string; undelivered?: boolean }> };
  expect(
    keys.map((k) => [k.status, !!k.undelivered]),
    label,
  ).toEqual([['active', false]]);
  expect(shown.length, label).toBeGreaterThan(0);
  expect(await status(shown.at(-1)!), `${label}: the last secret shown`).toBe(200);
  for (const old of shown.slice(0, -1)) expect(await status(old), `${label}: an earlier secret shown`).toBe(401);
}

let owners = 0;
const newOwner = () => `crash-${process.pid}-${++owners}`;

describe('keys create killed at each step, then finished as its output says', () => {
  it('a fresh create', async () => {
    const clean = killable();
    const first = await runUntil(clean, createArgs(newOwner()));
    expect(first.ended).toBe(0);
    const steps = clean.calls.length;
    expect(clean.calls).toEqual(FRESH_CREATE);
    for (let at = 1; at <= steps; at++)
      for (const when of ['before', 'after'] as const) {
        const owner = newOwner();
        const label = `killed ${when} call ${at} (${clean.calls[at - 1]})`;
        const killed = await runUntil(killable({ at, when }), createArgs(owner));
        expect(killed.ended, label).toBe('killed');
        const printed = printedKey(killed.out);
        // The secret is printed before the write that makes it work, and only then.
        expect(!!printed, label).toBe(at === steps);
        const shown = printed ? [printed.key] : [];
        if (printed)
          expect(await status(printed.key), `${label}: before it is finished`).toBe(when === 'after' ? 200 : 401);
        await finish(owner, printed, shown);
        await exactlyOneWorkingKey(owner, shown, label);
      }
  });

  it('the create run again to finish a key, itself killed at each of its steps', async () => {
    const steps = ['listPage', 'getById', 'replaceHash'];
    for (let at = 1; at <= steps.length; at++)
      for (const when of ['before', 'after'] as const) {
        const owner = newOwner();
        const label = `the finishing run killed ${when} call ${at} (${steps[at - 1]})`;
        // The first run killed before its secret was written under its hash: a key no secret works for.
        const first = await runUntil(killable(BEFORE_ITS_SECRET_WORKS), createArgs(owner));
        const shown = [printedKey(first.out)!.key];
        const run = killable({ at, when });
        const killed = await runUntil(run, createArgs(owner));
        expect(run.calls.slice(0, at), label).toEqual(steps.slice(0, at));
        expect(killed.ended, label).toBe('killed');
        const printed = printedKey(killed.out);
        expect(!!printed, label).toBe(at === steps.length);
        if (printed) {
          expect(printed.keyId, label).toBe(printedKey(first.out)!.keyId);
          shown.push(printed.key);
        }
        await finish(owner, printed ?? printedKey(first.out), shown);
        await exactlyOneWorkingKey(owner, shown, label);
      }
  });
});

describe('keys create failing at each step, then finished with the command its error names', () => {
  it('every storage call of a fresh create and of one that finishes a key', async () => {
    for (const leftOne of [false, true]) {
      const count = new StorageFaults();
      const owner0 = newOwner();
      if (leftOne) await runUntil(killable(BEFORE_ITS_SECRET_WORKS), createArgs(owner0));
      const clean = await runLocalAdmin(count.around(deps), ...createArgs(owner0));
      expect(clean.code, clean.err).toBe(0);
      const steps = count.calls.length;
      for (let at = 1; at <= steps; at++)
        for (const mode of ['throttle', 'error', 'lost'] as StorageFault[]) {
          const owner = newOwner();
          const label = `${leftOne ? 'finishing' : 'fresh'}: ${mode} at call ${at} (${count.calls[at - 1]})`;
          const shown: string[] = [];
          if (leftOne)
            shown.push(printedKey((await runUntil(killable(BEFORE_ITS_SECRET_WORKS), createArgs(owner))).out)!.key);
          const faults = new StorageFaults();
          faults.failAt(at, mode);
          let run = await runLocalAdmin(faults.around(deps), ...createArgs(owner));
          const trail = [`${run.code} ${run.err}`];
          if (printedKey(run.out)) shown.push(printedKey(run.out)!.key);
          if (run.code !== 0) {
            const named = /run `(keys [^`]+)`/.exec(JSON.parse(run.err).error as string)?.[1];
            expect(named, `${label}: ${trail.join('\n')}`).toMatch(/^keys create /);
            run = await runLocalAdmin(deps, ...named!.split(' '), '--json');
            trail.push(`${run.code} ${run.err}`);
            expect(run.code, `${label}: ${trail.join('\n')}`).toBe(0);
            shown.push(printedKey(run.out)!.key);
          }
          await exactlyOneWorkingKey(owner, shown, `${label}: ${trail.join('\n')}`);
        }
    }
  });
});

describe('a key whose create stopped before showing a working secret', () => {
  it('is refused at the API, said by show and list, and refused by commands that need a working secret', async () => {
    const owner = newOwner();
    const first = await runUntil(killable(BEFORE_ITS_SECRET_WORKS), createArgs(owner));
    const { key, keyId } = printedKey(first.out)!;
    expect(await status(key)).toBe(401);
    const show = await runLocalAdmin(deps, 'keys', 'show', keyId);
    expect(show.out).toContain(
      `NO WORKING SECRET: its create stopped before showing one, so every request with it is refused: run ` +
        `\`keys create --owner ${owner} --plan pro\`, which gives this key a new secret and shows it`,
    );
    const list = await runLocalAdmin(deps, 'keys', 'list', '--owner', owner);
    expect(list.out).toMatch(new RegExp(`^${keyId} .*  NO WORKING SECRET$`, 'm'));
    expect(list.out).toContain('1 of these key(s) with NO WORKING SECRET');
    for (const args of [
      ['rotate', keyId],
      ['set-plan', keyId, 'business'],
      ['ban', keyId, '--minutes', '5'],
    ]) {
      const r = await runLocalAdmin(deps, 'keys', ...args);
      expect({ code: r.code, err: r.err }, args.join(' ')).toEqual({
        code: 1,
        err:
          `error: key ${keyId} has no working secret yet (its create stopped before showing one): run ` +
          `\`keys create --owner ${owner} --plan pro\`, which gives it one ` +
          // Not the command the admin ran: the next step given is a read of the key.
          `(to see where it stands first: npm run admin -- keys show ${keyId} --local)`,
      });
    }
    // Finished in words: the same key id, a new secret, one history entry saying who created it.
    const done = await runLocalAdmin(deps, 'keys', 'create', '--owner', owner, '--plan', 'pro');
    expect(done.code, done.err).toBe(0);
    expect(done.out).toMatch(
      new RegExp(`^Finished \\(its earlier create stopped before showing a working secret\\) ${keyId}  active`),
    );
    const secret = /^API key \(shown once, store it now\): (\S+)$/m.exec(done.out)![1]!;
    expect(await status(secret)).toBe(200);
    expect((await runLocalAdmin(deps, 'keys', 'show', keyId)).out).not.toContain('NO WORKING SECRET');
    const history = JSON.parse((await runLocalAdmin(deps, 'keys', 'history', keyId, '--json')).out) as {
      entries: Array<{ command: string; result: string }>;
    };
    expect(history.entries.map((e) => [e.command, e.result])).toEqual([
      ['create --plan pro', 'created on pro (300/min, 10000/day) (its secret given by a create run again)'],
    ]);
    // A create after that is not taken to finish it again: within minutes it is refused as a rerun of the one that
    // finished it, naming it; asked for as another key, it is a new key.
    const rerun = await runLocalAdmin(deps, ...createArgs(owner));
    expect(rerun).toMatchObject({ code: 1, out: '' });
    expect(JSON.parse(rerun.err)).toMatchObject({
      error: expect.stringMatching(new RegExp(`^${keyId} was created for ${owner} on pro at .*add --another`)),
      next: `npm run admin -- keys show ${keyId} --local`,
    });
    const second = await runLocalAdmin(deps, ...createArgs(owner), '--another');
    expect(second.code, second.err).toBe(0);
    expect(printedKey(second.out)!.keyId).not.toBe(keyId);
  });
});

/**
 * The admin tool at API Gateway's documented control-plane rates (test/helpers/control-plane-fake.ts: the rates
 * enforced with TooManyRequestsException, and any call failing on demand), on the fake's clock, so a 20 s wait takes
 * no time; records on DynamoDB Local. Since pools, only keys made before them (an API key or usage plan of their own:
 * admin-scenarios.ts) still make purge call the control plane, so these start from such keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRACKET_POOL } from '../../contract/key-pool.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import { legacyKey, made } from '../helpers/admin-scenarios.ts';
import type { TestApi } from '../helpers/api.ts';
import { controlPlaneWorld, GRACE_MS, problems, recordsOf, type World } from '../helpers/control-plane-world.ts';

let api: TestApi;
let local: AdminDeps;
beforeAll(async () => {
  ({ api, deps: local } = await startLocalAdmin());
});
afterAll(() => api?.close());

const E600 = { perMinute: 600, perDay: 50_000 };

/** Marks the keys revoked (as `keys revoke` leaves them) and lets the grace period pass: purge's backlog. */
async function revokedPastGrace(w: World, ids: string[]) {
  for (const id of ids)
    await w.plain.store.update((await w.plain.store.getById(id))!, {
      status: 'revoked',
      revokedAt: new Date(w.fake.t).toISOString(),
    });
  w.fake.t += GRACE_MS + 60_000;
}

const throttled = (w: World) => w.fake.calls.filter((c) => c.outcome === 'throttled');

describe('pacing to the documented rates', () => {
  it('purging three Enterprise keys with usage plans of their own spaces the UpdateUsagePlan calls 20 s apart, and AWS throttles none', async () => {
    const w = controlPlaneWorld(local);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await legacyKey(w, 'enterprise', E600));
    await revokedPastGrace(w, ids);
    const purge = await runLocalAdmin(w.deps, 'keys', 'purge');
    expect(purge.code, purge.err).toBe(0);
    expect(purge.out.match(/^Purged /gm)).toHaveLength(3);
    const updates = w.fake.calls.filter((c) => c.op === 'UpdateUsagePlan').map((c) => c.at);
    expect(updates).toHaveLength(3);
    for (let i = 1; i < updates.length; i++) expect(updates[i]! - updates[i - 1]!).toBeGreaterThanOrEqual(20_000);
    expect(throttled(w)).toEqual([]);
    expect(await problems(w)).toEqual([]);
  });

  it('a call AWS throttles because another client spent the allowance (a deploy) is waited out and the command succeeds', async () => {
    const w = controlPlaneWorld(local);
    const id = await legacyKey(w, 'enterprise', E600);
    await revokedPastGrace(w, [id]);
    w.fake.spend('UpdateUsagePlan');
    const start = w.fake.t;
    const purge = await runLocalAdmin(w.deps, 'keys', 'purge');
    expect(purge.code, purge.err).toBe(0);
    const updates = w.fake.calls.filter((c) => c.op === 'UpdateUsagePlan');
    expect(updates.map((c) => c.outcome)).toContain('throttled');
    expect(updates.at(-1)!.outcome).toBe('ok');
    expect(w.fake.t - start).toBeGreaterThanOrEqual(20_000);
    expect(await problems(w)).toEqual([]);
  });

  it('purge goes on past a key it cannot clean, reports it, and exits non-zero; the command it names finishes it', async () => {
    const w = controlPlaneWorld(local);
    const ids = [await legacyKey(w, 'pro'), await legacyKey(w, 'business')];
    await revokedPastGrace(w, ids);
    w.fake.failAt(1, 'refused');
    const first = await runLocalAdmin(w.deps, 'keys', 'purge');
    expect(first.code).toBe(1);
    expect(first.out).toMatch(/^Failed key_\S+: .*ServiceUnavailable/m);
    expect(first.out).toMatch(/^Purged what API Gateway held for key_/m);
    const next = /run `(keys [^`]+)`/.exec(first.err)?.[1];
    const failed = /^Failed (key_\S+):/m.exec(first.out)![1]!;
    expect(first.err).toBe(`error: 1 of 2 keys not purged: run \`keys reconcile ${failed}\``);
    const second = await runLocalAdmin(w.deps, ...next!.split(' '));
    expect(second.code, second.err).toBe(0);
    expect(w.fake.keys.size, 'both API keys of their own deleted').toBe(0);
    expect(await problems(w)).toEqual([]);
  });
});

describe('a no-op change writes nothing', () => {
  it('set-plan to the plan a key already has (and Enterprise to the same limits) calls nothing, writes nothing, and says so', async () => {
    const w = controlPlaneWorld(local);
    const pro = await made(w, 'pro');
    const ent = await made(w, 'enterprise', E600);
    const before = await recordsOf(w);
    const calls = { cp: w.fake.calls.length, st: w.storage.calls.length };
    const same = await runLocalAdmin(w.deps, 'keys', 'set-plan', pro, 'pro');
    expect(same).toMatchObject({
      code: 0,
      out: `No change: ${pro} is already on pro with these limits (nothing written)`,
    });
    const sameLimits = await runLocalAdmin(
      w.deps,
      ...['keys', 'set-plan', ent, 'enterprise', '--per-minute', '600', '--per-day', '50000'],
    );
    expect(sameLimits).toMatchObject({ code: 0, out: expect.stringMatching(/^No change: /) });
    expect(w.fake.calls.length, 'no control-plane call').toBe(calls.cp);
    expect(
      w.storage.calls.slice(calls.st).filter((name) => !/^(store\.(get|find|read|list)|limits\.usage)/.test(name)),
      'no storage write',
    ).toEqual([]);
    expect(await recordsOf(w), 'no record written').toEqual(before);
  });
});

describe('the sweep before a release that adds a pool member', () => {
  it('keys reconcile --all completes a bracket pool made before its probation member, though every key is converged', async () => {
    const w = controlPlaneWorld(local);
    await made(w, 'enterprise', E600);
    // As an earlier release made it: the bracket's mapped members only.
    const probation = [...w.fake.keys.values()].find((k) => k.name.endsWith(`-m${BRACKET_POOL.members}`))!;
    w.fake.keys.delete(probation.id);
    for (const p of w.fake.plans.values()) p.keys.delete(probation.id);
    expect(await problems(w)).toEqual([expect.stringMatching(/its bracket's pool has 4 members/)]);
    const sweep = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all');
    expect(sweep.code, sweep.err).toBe(0);
    expect(sweep.out).toMatch(/made pool member \S+-m4/);
    expect(await problems(w)).toEqual([]);
  });

  it.each(['refused', 'lost'] as const)(
    'a sweep whose bracket check fails (%s) finishes the pool, at once or with the command it names',
    async (mode) => {
      const w = controlPlaneWorld(local);
      await made(w, 'enterprise', E600);
      const probation = [...w.fake.keys.values()].find((k) => k.name.endsWith(`-m${BRACKET_POOL.members}`))!;
      w.fake.keys.delete(probation.id);
      for (const p of w.fake.plans.values()) p.keys.delete(probation.id);
      // The sweep's calls: the bracket's plan found, its keys read, then the missing member made: that one fails.
      w.fake.failAt(3, mode);
      const first = await runLocalAdmin(w.deps, 'keys', 'reconcile', '--all');
      // A lost answer is found by the member's name on the same run (the gateway adapter looks before making again).
      expect(first.code, first.err).toBe(mode === 'refused' ? 1 : 0);
      if (first.code) {
        const next = /run `(keys [^`]+)`/.exec(first.err)?.[1];
        expect(next, first.err).toMatch(/^keys reconcile /);
        const second = await runLocalAdmin(w.deps, ...next!.split(' '));
        expect(second.code, second.err).toBe(0);
      }
      expect(await problems(w)).toEqual([]);
    },
  );
});

/**
 * The admin tool at API Gateway's documented control-plane rates (test/helpers/control-plane-fake.ts: the rates
 * enforced with TooManyRequestsException, and any call failing on demand), on the fake's clock, so a 20 s wait takes
 * no time. Only `keys remove-release-api-keys` calls the control plane: at most 2 calls a second whatever the
 * operation, UpdateUsagePlan 20 s apart. A change that changes nothing writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REMOVAL_CALL_MS } from '../../lib/admin/release-api-keys.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import { made, releaseLeftovers } from '../helpers/admin-scenarios.ts';
import type { TestApi } from '../helpers/api.ts';
import { controlPlaneWorld, problems, recordsOf, type World } from '../helpers/control-plane-world.ts';

let api: TestApi;
let local: AdminDeps;
beforeAll(async () => {
  ({ api, deps: local } = await startLocalAdmin());
});
afterAll(() => api?.close());

const E600 = { perMinute: 600, perDay: 50_000 };

const throttled = (w: World) => w.fake.calls.filter((c) => c.outcome === 'throttled');

describe('pacing to the documented rates', () => {
  it('the removal keeps to 2 calls a second, UpdateUsagePlan 20 s apart, and AWS throttles none', async () => {
    const w = controlPlaneWorld(local);
    releaseLeftovers(w);
    expect((await w.admin.removeReleaseApiKeys()).deletedUsagePlans).toHaveLength(4);
    const at = w.fake.calls.map((c) => c.at);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(REMOVAL_CALL_MS);
    const updates = w.fake.calls.filter((c) => c.op === 'UpdateUsagePlan').map((c) => c.at);
    expect(updates).toHaveLength(4);
    for (let i = 1; i < updates.length; i++) expect(updates[i]! - updates[i - 1]!).toBeGreaterThanOrEqual(20_000);
    expect(throttled(w)).toEqual([]);
    expect(await problems(w)).toEqual([]);
  });

  it('a call AWS throttles because another client spent the allowance (a deploy) is waited out and the command succeeds', async () => {
    const w = controlPlaneWorld(local);
    releaseLeftovers(w);
    // A deploy updating the stack's usage plans, just now.
    w.fake.spend('UpdateUsagePlan');
    const start = w.fake.t;
    await w.admin.removeReleaseApiKeys();
    const updates = w.fake.calls.filter((c) => c.op === 'UpdateUsagePlan');
    expect(updates.map((c) => c.outcome)).toContain('throttled');
    expect(updates.at(-1)!.outcome).toBe('ok');
    expect(w.fake.t - start).toBeGreaterThanOrEqual(20_000);
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

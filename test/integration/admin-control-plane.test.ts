/**
 * Admin changes under API Gateway's control plane as AWS documents it (test/helpers/control-plane-fake.ts: its
 * rates enforced with TooManyRequestsException, NotFound/Conflict answers, and a fault armed at any call, refused or
 * with its answer lost): every command, failing at each of its calls in turn, leaves nothing behind that no record
 * names, and running it again finishes it. The fake's inventory is checked after every run; records are on
 * DynamoDB Local. The pacing sleeps on the fake's clock, so 20 s waits take no time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usagePlanThrottle, type PlanName } from '../../contract/plans.ts';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { startLocalAdmin, runLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import type { FaultMode } from '../helpers/control-plane-fake.ts';
import { controlPlaneWorld, problems, recordsOf, type World } from '../helpers/control-plane-world.ts';

let api: TestApi;
let localDeps: AdminDeps;
beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
});
afterAll(() => api?.close());

const world = () => controlPlaneWorld(localDeps);

interface Scenario {
  readonly name: string;
  /** Keys the command starts from (made with no fault). */
  readonly setup: (w: World) => Promise<string[]>;
  readonly run: (w: World, ids: string[]) => Promise<unknown>;
  /** What the records look like once the command has run through (after a retry and a purge, if it failed). */
  readonly done: (records: KeyRecord[]) => void;
}

const ENTERPRISE = { plan: 'enterprise', perMinute: 600, perDay: 50_000 } as const;
const create = (w: World, input: { plan: PlanName; perMinute?: number; perDay?: number }) =>
  w.admin.create({ owner: w.owner, ...input }).then((c) => c.record.keyId);
const moveTo =
  (plan: PlanName, limits: { perMinute?: number; perDay?: number } = {}) =>
  (w: World, [id]: string[]) =>
    w.admin.setPlan(id!, { plan, ...limits });
const onPlan = (plan: PlanName) => (records: KeyRecord[]) => {
  expect(records.map((r) => r.plan)).toEqual([plan]);
  expect(records[0]!.retiredUsagePlanId).toBeUndefined();
};

/** Purge, failing on any key it could not clean; done when every key is revoked with nothing left at the gateway. */
const PURGE: Pick<Scenario, 'run' | 'done'> = {
  run: async (w) => {
    const { failed } = await w.admin.purge();
    if (failed.length) throw new Error(failed.map((f) => f.error).join('; '));
  },
  done: (records) => {
    for (const r of records)
      expect([r.status, r.apiGatewayKeyId, r.usagePlanId]).toEqual(['revoked', undefined, undefined]);
  },
};

/** An Enterprise key as made before brackets: on a usage plan of its own (which a move or purge deletes). */
async function legacyEnterprise(w: World): Promise<string> {
  const id = await create(w, ENTERPRISE);
  const record = (await localDeps.store.getById(id))!;
  const own = w.fake.seedPlan(`animal-store-staging-enterprise-${id}`);
  const t = usagePlanThrottle(ENTERPRISE);
  Object.assign(w.fake.plans.get(own)!, { throttle: t, quota: { limit: t.quotaPerDay, period: 'DAY' } });
  for (const p of w.fake.plans.values()) p.keys.delete(record.apiGatewayKeyId!);
  w.fake.plans.get(own)!.keys.add(record.apiGatewayKeyId!);
  await localDeps.store.update(record, { usagePlanId: own });
  return id;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'create (Pro)',
    setup: async () => [],
    run: (w) => create(w, { plan: 'pro' }),
    done: () => undefined,
  },
  {
    name: 'create (Enterprise)',
    setup: async () => [],
    run: (w) => create(w, ENTERPRISE),
    done: () => undefined,
  },
  {
    name: 'set-plan Pro → Business',
    setup: async (w) => [await create(w, { plan: 'pro' })],
    run: moveTo('business'),
    done: onPlan('business'),
  },
  {
    name: 'set-plan Free → Business',
    setup: async (w) => [await create(w, { plan: 'free' })],
    run: moveTo('business'),
    done: onPlan('business'),
  },
  {
    name: 'set-plan Pro → Enterprise',
    setup: async (w) => [await create(w, { plan: 'pro' })],
    run: moveTo('enterprise', { perMinute: 600, perDay: 50_000 }),
    done: onPlan('enterprise'),
  },
  {
    name: 'set-plan Enterprise → Pro',
    setup: async (w) => [await create(w, ENTERPRISE)],
    run: moveTo('pro'),
    done: onPlan('pro'),
  },
  {
    name: 'set-plan Enterprise limits',
    setup: async (w) => [await create(w, ENTERPRISE)],
    run: moveTo('enterprise', { perMinute: 1200, perDay: 90_000 }),
    done: (records) => expect(records.map((r) => r.limits)).toEqual([{ perMinute: 1200, perDay: 90_000 }]),
  },
  {
    name: 'set-plan Enterprise (a plan of its own, from before brackets) → its bracket',
    setup: async (w) => [await legacyEnterprise(w)],
    run: moveTo('enterprise', { perMinute: 1200, perDay: 90_000 }),
    done: (records) => {
      expect(records.map((r) => [r.plan, r.usagePlanId, r.retiredUsagePlanId])).toEqual([
        ['enterprise', undefined, undefined],
      ]);
    },
  },
  {
    name: 'purge (an Enterprise key with a plan of its own, revoked)',
    setup: async (w) => {
      const id = await legacyEnterprise(w);
      await w.admin.revoke(id);
      w.fake.t += 10 * 60_000;
      return [id];
    },
    ...PURGE,
  },
  {
    name: 'purge (an Enterprise and a Pro key, revoked)',
    setup: async (w) => {
      const ids = [await create(w, ENTERPRISE), await create(w, { plan: 'pro' })];
      for (const id of ids) await w.admin.revoke(id);
      w.fake.t += 10 * 60_000;
      return ids;
    },
    ...PURGE,
  },
];

/** Runs a scenario with a fault at call `at` (none: undefined); returns the world and how many calls it made. */
async function play(s: Scenario, fault?: { at: number; mode: FaultMode }) {
  const w = world();
  const ids = await s.setup(w);
  const before = w.fake.calls.length;
  if (fault) w.fake.failAt(fault.at, fault.mode);
  const outcome = await s.run(w, ids).then(
    () => 'ok',
    (err: unknown) => String(err),
  );
  return { w, ids, outcome, calls: w.fake.calls.length - before };
}

describe('every admin change, failing at each control-plane call in turn, leaves nothing behind and resumes', () => {
  for (const s of SCENARIOS) {
    it(
      s.name,
      async () => {
        const clean = await play(s);
        expect(clean.outcome).toBe('ok');
        expect(await problems(clean.w)).toEqual([]);
        s.done(await recordsOf(clean.w));
        expect(clean.calls).toBeGreaterThan(0);
        for (let at = 1; at <= clean.calls; at++) {
          for (const mode of ['refused', 'lost'] as const) {
            const run = await play(s, { at, mode });
            const label = `${s.name}, ${mode} at call ${at} (${run.outcome})`;
            expect(await problems(run.w), label).toEqual([]);
            // Run again (a create is not resumed: a failed one left nothing), then purge: the change is whole.
            if (run.outcome !== 'ok' && run.ids.length) await s.run(run.w, run.ids);
            const purge = await run.w.admin.purge();
            expect(purge.failed, label).toEqual([]);
            expect(await problems(run.w), label).toEqual([]);
            if (run.ids.length) s.done(await recordsOf(run.w));
            expect(
              run.w.fake.calls.filter((c) => c.outcome === 'throttled'),
              'paced: AWS never throttles',
            ).toEqual([]);
          }
        }
      },
      120_000,
    );
  }
});

describe('pacing to the documented rates', () => {
  it('purging three Enterprise keys with plans of their own spaces the UpdateUsagePlan calls 20 s apart, and AWS throttles none', async () => {
    const w = world();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await legacyEnterprise(w));
    for (const id of ids) await w.admin.revoke(id);
    w.fake.t += 10 * 60_000;
    const { purged, failed } = await w.admin.purge();
    expect([purged.length, failed]).toEqual([3, []]);
    const updates = w.fake.calls.filter((c) => c.op === 'UpdateUsagePlan').map((c) => c.at);
    expect(updates).toHaveLength(3);
    for (let i = 1; i < updates.length; i++) expect(updates[i]! - updates[i - 1]!).toBeGreaterThanOrEqual(20_000);
    expect(w.fake.calls.filter((c) => c.outcome === 'throttled')).toEqual([]);
    expect(await problems(w)).toEqual([]);
  });

  it('a call AWS throttles because someone else spent the allowance (a deploy) is retried after a backoff', async () => {
    const w = world();
    const id = await legacyEnterprise(w);
    w.fake.spend('UpdateUsagePlan');
    const start = w.fake.t;
    await w.admin.setPlan(id, { plan: 'pro' });
    const updates = w.fake.calls.filter((c) => c.op === 'UpdateUsagePlan');
    expect(updates.map((c) => c.outcome)).toContain('throttled');
    expect(updates.at(-1)!.outcome).toBe('ok');
    expect(w.fake.t - start).toBeGreaterThanOrEqual(20_000);
    expect(await problems(w)).toEqual([]);
  });

  it('purge goes on past a key it cannot clean, reports it, and exits non-zero; the next purge finishes it', async () => {
    const w = world();
    const ids = [await create(w, { plan: 'pro' }), await create(w, { plan: 'business' })];
    for (const id of ids) await w.admin.revoke(id);
    w.fake.t += 10 * 60_000;
    w.fake.failAt(1, 'refused');
    const first = await runLocalAdmin(w.deps, 'keys', 'purge');
    expect(first.code).toBe(1);
    expect(first.out).toMatch(/^Failed .*ServiceUnavailable/m);
    expect(first.out).toMatch(/^Purged /m);
    expect(first.err).toMatch(/^error: 1 of \d+ keys not purged: run `keys purge` again$/);
    const second = await runLocalAdmin(w.deps, 'keys', 'purge');
    expect(second.code).toBe(0);
    expect(w.fake.keys.size).toBe(0);
  });
});

describe('a no-op change writes nothing', () => {
  it('set-plan to the plan a key already has (and Enterprise to the same limits) calls nothing and says so', async () => {
    const w = world();
    const pro = await create(w, { plan: 'pro' });
    const ent = await create(w, ENTERPRISE);
    const before = await recordsOf(w);
    const calls = w.fake.calls.length;
    const same = await runLocalAdmin(w.deps, 'keys', 'set-plan', pro, 'pro');
    expect(same).toMatchObject({
      code: 0,
      out: `No change: ${pro} is already on pro with these limits (nothing written)`,
    });
    const sameLimits = await runLocalAdmin(
      w.deps,
      ...['keys', 'set-plan', ent, 'enterprise', '--per-minute', '600', '--per-day', '50000'],
    );
    expect(sameLimits.out).toMatch(/^No change/);
    expect(w.fake.calls.length, 'no control-plane call').toBe(calls);
    expect(await recordsOf(w), 'no record written').toEqual(before);
  });
});

describe('Enterprise at scale', () => {
  it("a thousand Enterprise customers with all kinds of limits fit in the account's 300 usage plans", async () => {
    const w = world();
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    for (let i = 0; i < 1_000; i++) {
      const perMinute = Math.ceil(10 ** (random() * Math.log10(600_000)));
      const perDay = Math.min(perMinute * Math.ceil(10 ** (random() * Math.log10(1_440))), 864_000_000);
      await create(w, { plan: 'enterprise', perMinute, perDay });
    }
    const enterprisePlans = [...w.fake.plans.values()].filter((p) => p.name.includes('-enterprise-'));
    expect(enterprisePlans.length).toBeGreaterThan(1);
    expect(enterprisePlans.length).toBeLessThanOrEqual(80);
    expect(w.fake.calls.filter((c) => c.outcome === 'error')).toEqual([]);
    expect(await problems(w)).toEqual([]);
  }, 300_000);
});

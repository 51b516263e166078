/**
 * Keys of every plan for the abuse tests over HTTP (a spent key, a banned key, probation): the same property is shown
 * for Free, Pro, Business and an Enterprise bracket, each plan's keys on its own pool (contract/key-pool.ts). Records
 * are written as the admin tool writes them (an Enterprise key with its agreed limits), served by the local gateway
 * with the template's authorizer cache (60 s), on a clock the test moves.
 */
import { afterAll, beforeAll } from 'vitest';
import { poolValueOf } from '../../contract/key-pool.ts';
import { PLANS, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { enterpriseBracket } from '../../contract/brackets.ts';
import { bracketProbationKeyValue, probationValueOf } from '../../contract/probation.ts';
import { generateKey, generateKeyId, hashKey } from '../../lambdas/domain/keys.ts';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';
import { noteStanding } from '../../lambdas/storage/standing.ts';
import { recordBracketProbation } from '../../lambdas/storage/bracket-probation.ts';
import { startTestApi, type TestApi } from './api.ts';

/** One plan under test: its keys' limits, and for Enterprise another bracket's (a key on another probation shard). */
export interface PlanCase {
  readonly name: string;
  readonly plan: PlanName;
  readonly limits: PlanLimits;
  readonly otherLimits?: PlanLimits;
}

/**
 * The plans every abuse property is shown for. The Enterprise key's limits (1,200/min, 30,000/day) put it in a
 * bracket whose plan (rate 100/s, bucket 5,000, 300,000 a day) a flooder cycling bans all day would drain in about
 * 28 cycles if it stayed on its member; its other limits are in another bracket.
 */
export const EVERY_PLAN: readonly PlanCase[] = [
  { name: 'Free', plan: 'free', limits: PLANS.free.limits! },
  { name: 'Pro', plan: 'pro', limits: PLANS.pro.limits! },
  { name: 'Business', plan: 'business', limits: PLANS.business.limits! },
  {
    name: 'Enterprise bracket',
    plan: 'enterprise',
    limits: { perMinute: 1_200, perDay: 30_000 },
    otherLimits: { perMinute: 600, perDay: 20_000 },
  },
];

export interface PlanKey {
  readonly key: string;
  readonly keyId: string;
  readonly plan: PlanName;
  readonly limits: PlanLimits;
}

/** Two keys of a plan: on one pool member (`member`), or on different probation shards (`shards`). */
export type Pairing = 'member' | 'shards';

function planKey(c: PlanCase, limits: PlanLimits = c.limits): PlanKey {
  return { key: generateKey(), keyId: generateKeyId(), plan: c.plan, limits };
}

/** Two keys of `c`'s plan, paired as asked (the mapping does not depend on the stage's name). */
export function pairOf(c: PlanCase, pairing: Pairing): { a: PlanKey; b: PlanKey } {
  const a = planKey(c);
  for (let i = 0; ; i++) {
    if (pairing === 'member') {
      const b = planKey(c);
      if (poolValueOf(b, 's') === poolValueOf(a, 's')) return { a, b };
    } else {
      // An Enterprise bracket has one probation member: a key on another one is in another bracket.
      const b = planKey(c, c.otherLimits ?? c.limits);
      if (probationValueOf(b, 's') !== probationValueOf(a, 's')) return { a, b };
    }
    if (i > 100_000) throw new Error(`no ${pairing} pair for ${c.name}`);
  }
}

/** Writes each key's record as the admin tool writes it (an Enterprise key with its agreed limits), active. */
export async function registerKeys(api: TestApi, keys: readonly PlanKey[], owner = 'abuse-test'): Promise<void> {
  const store = createKeyAdminStore(api.storage);
  for (const k of keys)
    await store.upsert({
      hash: hashKey(k.key),
      keyId: k.keyId,
      owner,
      plan: k.plan,
      // Fixed plans' limits come from the plans table, as on a record the admin tool writes.
      ...(k.plan === 'enterprise' ? { limits: k.limits } : {}),
      status: 'active',
      createdAt: '2030-01-01T00:00:00.000Z',
    });
  // An Enterprise key's bracket as the admin tool leaves it: its pool made (the local gateway applies the bracket's
  // plan itself) and its probation member recorded, which the authorizer needs before it names that member.
  const stage = String([...api.model.functions.values()].map((f) => f.environment.USAGE_KEYS_STAGE).find(Boolean));
  for (const k of keys)
    if (k.plan === 'enterprise') {
      const bracket = enterpriseBracket(k.limits).id;
      await recordBracketProbation(api.storage, bracket, bracketProbationKeyValue(stage, bracket));
    }
}

export interface PlanKeysFixture {
  readonly pairs: ReadonlyArray<PlanCase & { readonly a: PlanKey; readonly b: PlanKey }>;
  api: TestApi;
  /** The stage the pool's API key values are named for, as the authorizer is told (USAGE_KEYS_STAGE). */
  stage: string;
}

/**
 * For a test file: a pair of keys of every plan (EVERY_PLAN) paired as asked, served by a test API with the
 * template's authorizer cache (`api` and `stage` are there once beforeAll has run, and closed afterAll).
 */
export function planKeysFixture(pairing: Pairing): PlanKeysFixture {
  const pairs: PlanKeysFixture['pairs'] = EVERY_PLAN.map((c) => ({ ...c, ...pairOf(c, pairing) }));
  const fixture = { pairs } as PlanKeysFixture;
  beforeAll(async () => {
    // Its floods test the usage plans at one frozen instant, past a method's stage burst (stage-throttle.test.ts).
    fixture.api = await startTestApi({ devKeys: [], authCacheTtlSeconds: undefined, stageThrottle: false });
    await registerKeys(
      fixture.api,
      pairs.flatMap((p) => [p.a, p.b]),
    );
    fixture.stage = String(
      [...fixture.api.model.functions.values()].map((f) => f.environment.USAGE_KEYS_STAGE).find(Boolean),
    );
  });
  afterAll(() => fixture.api?.close());
  return fixture;
}

/** What the authorizer tells the gateway about a key (enough for the local gateway to find an Enterprise plan). */
export const callerOf = (k: PlanKey) => ({ plan: k.plan, perMinute: k.limits.perMinute, perDay: k.limits.perDay });

/** Requests counted today on the API key `value` (a pool member, a probation key) for `k`'s plan. */
export const usedOn = (api: TestApi, value: string, k: PlanKey): number => api.usage.used(value, callerOf(k));

/** `n` requests of `k` at the clock's instant, `batch` at a time; how many got each `status code`. */
export async function flood(api: TestApi, k: PlanKey, n: number, batch = 25): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let i = 0; i < n; i += batch) {
    const responses = await Promise.all(
      Array.from({ length: Math.min(batch, n - i) }, () =>
        api.call('/pets?limit=1', { key: k.key, contract: i === 0 }),
      ),
    );
    for (const res of responses) {
      const { code } = (await res.json()) as { code?: string };
      const seenAs = `${res.status} ${code ?? 'ok'}`;
      seen.set(seenAs, (seen.get(seenAs) ?? 0) + 1);
    }
  }
  return seen;
}

/**
 * One ban cycle of an abuser, from the moment its ban ends (`nowSec`): the gateway asks the authorizer (the cached
 * Deny has expired), A's request is counted where the authorizer names; then A floods as long as the cached Allow
 * lasts (`ttl` seconds: the usage plan's full bucket and `ttl` seconds of refill) before its next ban shows. That
 * flood is counted on the usage-plan model directly, as the gateway counts it, instead of thousands of HTTP requests.
 * Answers what A's first request got and whether the key it was counted on ran out of its day quota.
 */
export async function banCycle(
  api: TestApi,
  k: PlanKey,
  countedOn: string,
  nowSec: number,
  ttl: number,
): Promise<{ status: string; spent: boolean }> {
  await noteStanding(api.storage, hashKey(k.key), { bannedUntil: nowSec - 1 });
  const res = await api.call('/pets?limit=1', { key: k.key, contract: false });
  const status = `${res.status}${res.ok ? '' : ` ${((await res.json()) as { code: string }).code}`}`;
  if (!res.ok) return { status, spent: status === '429 quota_exceeded' };
  await res.arrayBuffer();
  const plan = api.usage.planFor(countedOn, callerOf(k))!;
  const n = plan.burstLimit! + ttl * plan.rateLimit!;
  for (let i = 0; i < n; i++)
    if (api.usage.admit(countedOn, callerOf(k), (nowSec + (i * ttl) / n) * 1000) === 'QUOTA_EXCEEDED')
      return { status, spent: true };
  return { status, spent: false };
}

/** How many such cycles spend a usage plan's day quota: what a flooder left on its member would need. */
export function cyclesToSpend(api: TestApi, value: string, k: PlanKey, ttl: number): number {
  const plan = api.usage.planFor(value, callerOf(k))!;
  return Math.ceil(plan.quota!.limit / (plan.burstLimit! + ttl * plan.rateLimit!));
}

/**
 * Keys at any scale: 50,000 paying keys and 1,000 Enterprise keys across every bracket, on a fake control plane that
 * enforces AWS's quotas (10,000 API keys per account and Region, 300 usage plans, 10 usage plans per API key,
 * CreateApiKey 5 per second: control-plane-fake.ts). The stage starts with what its template makes (the standard
 * plans' usage plans and pools, the spent-keys and probation keys); creating paying keys calls no control-plane API
 * at all, and Enterprise keys add only their brackets' pools, once per bracket, so the number of API keys and usage
 * plans per stage is a constant of the template and the brackets whatever the number of customers. Records beyond
 * the ones the admin creates are batch-written as `keys create` writes them, to keep the test fast.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ENTERPRISE_BRACKETS, enterpriseBracket } from '../../contract/brackets.ts';
import {
  BRACKET_POOL,
  FREE_KEY_POOL,
  PAYING_POOLS,
  payingPoolKeyValue,
  poolKeyValue,
  spentKeyValue,
} from '../../contract/key-pool.ts';
import { PAYING_PROBATION, PROBATION, payingProbationKeyValue, probationKeyValue } from '../../contract/probation.ts';
import { MAX_CUSTOM_LIMITS, type PlanLimits } from '../../contract/plans.ts';
import { hashKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { listing } from '../../lambdas/storage/key-listing.ts';
import { keyAdmin, type AdminDeps } from '../../lib/admin/service.ts';
import { rangeWriter } from '../../bench/lib/batch-write.ts';
import { startLocalAdmin } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { API_KEYS_PER_ACCOUNT, USAGE_PLANS_PER_ACCOUNT } from '../helpers/control-plane-fake.ts';
import { controlPlaneWorld, STAGE, type World } from '../helpers/control-plane-world.ts';

let api: TestApi;
let localDeps: AdminDeps;
beforeAll(async () => {
  ({ api, deps: localDeps } = await startLocalAdmin());
});
afterAll(() => api?.close());

/** What the stack's template makes on a stage (lib/constructs/usage-plans.ts), in the fake. */
function templateStage(w: World) {
  const pools = [w.fake.seedPlan('FreePool'), ...Object.keys(PAYING_POOLS).map((p) => w.fake.seedPlan(`${p}Pool`))];
  const spent = w.fake.seedPlan('SpentDayQuota');
  const seed = (plan: string, value: string) => {
    const id = `seed-${value}`;
    w.fake.keys.set(id, { id, name: value, value });
    w.fake.plans.get(plan)!.keys.add(id);
  };
  for (let m = 0; m < FREE_KEY_POOL.members; m++) seed(pools[0]!, poolKeyValue(STAGE, m));
  Object.entries(PAYING_POOLS).forEach(([plan, pool], i) => {
    for (let m = 0; m < pool.members; m++) seed(pools[i + 1]!, payingPoolKeyValue(STAGE, plan as 'pro', m));
  });
  seed(spent, spentKeyValue(STAGE));
  for (let shard = 0; shard < PROBATION.shards; shard++) seed(pools[0]!, probationKeyValue(STAGE, shard));
  Object.keys(PAYING_POOLS).forEach((plan, i) => {
    for (let shard = 0; shard < PAYING_PROBATION.shards; shard++)
      seed(pools[i + 1]!, payingProbationKeyValue(STAGE, plan as 'pro', shard));
  });
}

const counts = (w: World) => ({ apiKeys: w.fake.keys.size, usagePlans: w.fake.plans.size });

/** One Enterprise limits per bracket the whole range of limits can use, then random ones up to `n`. */
function enterpriseLimits(n: number): PlanLimits[] {
  const byBracket = new Map<string, PlanLimits>();
  for (let perMinute = 1; perMinute <= MAX_CUSTOM_LIMITS.perMinute; perMinute = Math.ceil(perMinute * 1.07))
    for (let perDay = perMinute; perDay <= MAX_CUSTOM_LIMITS.perDay; perDay = Math.ceil(perDay * 1.07)) {
      const id = enterpriseBracket({ perMinute, perDay }).id;
      if (!byBracket.has(id)) byBracket.set(id, { perMinute, perDay });
    }
  const all = [...byBracket.values()];
  let seed = 7;
  const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
  while (all.length < n) {
    const perMinute = Math.ceil(10 ** (random() * Math.log10(600_000)));
    all.push({ perMinute, perDay: Math.min(perMinute * Math.ceil(10 ** (random() * Math.log10(1_440))), 864_000_000) });
  }
  return all;
}

it('50,000 paying and 1,000 Enterprise keys across every bracket leave the API keys and usage plans per stage a constant', async () => {
  const w = controlPlaneWorld(localDeps);
  templateStage(w);
  const empty = counts(w);

  // 1,000 Enterprise keys, every bracket among them: each bracket's pool is made once, by its first key.
  const limits = enterpriseLimits(1_000);
  for (const l of limits) await w.admin.create({ owner: w.owner, plan: 'enterprise', ...l });
  const brackets = new Set(limits.map((l) => enterpriseBracket(l).id)).size;
  expect(brackets).toBeLessThanOrEqual(ENTERPRISE_BRACKETS);
  const full = counts(w);
  expect(full).toEqual({
    apiKeys: empty.apiKeys + brackets * BRACKET_POOL.apiKeys,
    usagePlans: empty.usagePlans + brackets,
  });

  // Paying keys: `keys create` calls no control-plane API.
  const before = w.fake.calls.length;
  for (let i = 0; i < 500; i++) await w.admin.create({ owner: w.owner, plan: i % 2 ? 'pro' : 'business' });
  expect(w.fake.calls.length - before, 'control-plane calls for 500 paying keys').toBe(0);
  // The other 49,500 as those creates wrote them, in batches.
  const createdAt = new Date(w.fake.now()).toISOString();
  const record = (i: number): KeyRecord => ({
    hash: hashKey(`bulk-${i}-${randomBytes(8).toString('hex')}`),
    keyId: `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`,
    owner: w.owner,
    plan: i % 2 ? 'pro' : 'business',
    status: 'active',
    createdAt,
    version: 1,
    reconciledVersion: 1,
    writeId: randomUUID(),
  });
  const write = rangeWriter((i) => {
    const r = record(i);
    return marshall({ ...r, ...listing(r) });
  });
  await write(w.plain.storage!.ddb, w.plain.storage!.tables.keys, 0, 49_500);
  // More Enterprise keys in brackets already used, by another run of the tool: only reads at the gateway.
  const another = keyAdmin(w.deps);
  const reads = w.fake.calls.length;
  for (const l of limits.slice(0, 100)) await another.create({ owner: w.owner, plan: 'enterprise', ...l });
  expect(new Set(w.fake.calls.slice(reads).map((c) => c.op))).toEqual(new Set(['GetUsagePlans', 'GetUsagePlanKeys']));

  const after = counts(w);
  expect(after, 'per stage: a constant of the template and the brackets').toEqual(full);
  expect(after.apiKeys).toBeLessThan(API_KEYS_PER_ACCOUNT / 2);
  expect(after.usagePlans).toBeLessThan(USAGE_PLANS_PER_ACCOUNT / 2);
  expect(w.fake.calls.filter((c) => c.outcome === 'error' || c.outcome === 'throttled')).toEqual([]);
  console.info(
    `per stage: empty ${JSON.stringify(empty)}, with ${brackets} brackets and 51,000+ keys ${JSON.stringify(after)}`,
  );
  // The bound for any customers: the template's and every bracket's pool, for both stages of an account.
  const bound = {
    apiKeys: empty.apiKeys + ENTERPRISE_BRACKETS * BRACKET_POOL.apiKeys,
    usagePlans: empty.usagePlans + ENTERPRISE_BRACKETS,
  };
  expect(2 * bound.apiKeys).toBeLessThan(API_KEYS_PER_ACCOUNT);
  expect(2 * bound.usagePlans).toBeLessThan(USAGE_PLANS_PER_ACCOUNT);
}, 600_000);

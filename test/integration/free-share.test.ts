/**
 * The Free plan's usage plan holds a share of the stage (staging: rate 5,000/s, bucket 250, half the paying plans'),
 * so Free keys at their full contract, however many, leave the paying plans the rest. Over HTTP through the local
 * gateway as deployed (the template's authorizer cache, usage plans and stage throttle), on the test's clock: 60
 * Free keys each send their whole minute within half a second over the read operations (7,200 requests a second, more
 * than the Free share, each method under its own rate), and a Business key sends its whole minute of creates in the same
 * half second. The Free keys meet the gateway's 429 (THROTTLED: the Free share is spent), the Business key is served
 * every request.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PLANS } from '../../contract/plans.ts';
import { ROUTES, writes } from '../../contract/routes.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import {
  fire,
  planKey,
  planUsagePlan,
  registerKeys,
  spread,
  tallyOf,
  usedOnPlan,
  type PlanKey,
} from '../helpers/plan-keys.ts';

const FREE_KEYS = 60;

let api: TestApi;
let free: PlanKey[];
let business: PlanKey;
beforeAll(async () => {
  api = await startTestApi({ devKeys: [], authCacheTtlSeconds: undefined });
  free = Array.from({ length: FREE_KEYS }, () => planKey({ plan: 'free', limits: PLANS.free.limits! }));
  business = planKey({ plan: 'business', limits: PLANS.business.limits! });
  await registerKeys(api, [...free, business], 'free-share-test');
});
afterAll(() => api?.close());

it('Free keys at their full contract spend the Free share; a Business key still gets its whole minute', async () => {
  const freeShare = planUsagePlan(api, 'free');
  const start = Date.UTC(2037, 5, 1, 12, 0, 1);
  const span = 500;
  const freeRate = (FREE_KEYS * PLANS.free.limits!.perMinute * 1_000) / span;
  // Every operation that reads (by what it declares, not its HTTP method), each taking its part (any answer a
  // function gives is counted); the Business key's creates have their own method.
  const freeShots = ROUTES.filter((r) => !writes(r)).map((r) => ({
    path: r.path.replace(/\{[^}]+\}/g, 'free-share-none'),
    init: { method: r.method } satisfies RequestInit,
  }));
  const methodRate = api.model.stageThrottle!.default!.rateLimit;
  // More than the Free share admits; on each method, less than the method's rate; together with the Business key's,
  // less than the stage's.
  expect(freeRate).toBeGreaterThan(freeShare.rateLimit!);
  expect(freeRate / freeShots.length).toBeLessThan(methodRate);
  expect((PLANS.business.limits!.perMinute * 1_000) / span).toBeLessThan(methodRate);
  expect(freeRate + (PLANS.business.limits!.perMinute * 1_000) / span).toBeLessThan(
    planUsagePlan(api, 'business').rateLimit!,
  );
  const creates = ROUTES.find((r) => r.does === 'creates' && !r.path.includes('{'))!;
  const create: RequestInit = { method: creates.method, body: JSON.stringify(creates.sample.body) };

  const counted = { free: usedOnPlan(api, 'free'), business: usedOnPlan(api, 'business') };
  const seen = await fire(
    api,
    [
      // Each Free key its whole minute, the keys a little apart.
      ...free.flatMap((k, i) =>
        spread('free', k.key, PLANS.free.limits!.perMinute, start + (i * span) / (FREE_KEYS * 60), span).map(
          (shot, j) => ({ ...shot, ...freeShots[(i + j) % freeShots.length]! }),
        ),
      ),
      ...spread('business', business.key, PLANS.business.limits!.perMinute, start, span).map((shot) => ({
        ...shot,
        path: creates.path,
        init: create,
      })),
    ],
    60,
  );

  expect(tallyOf(seen, 'business')).toEqual({ 201: PLANS.business.limits!.perMinute });
  const { '429 rate_limited (gateway)': refused = 0, ...byFunctions } = tallyOf(seen, 'free');
  const served = Object.values(byFunctions).reduce((a, b) => a + b, 0);
  // The Free share was spent: the gateway refused what its bucket could not hold, and let through no more than its
  // bucket and its refill over the half second (and the few milliseconds the last requests come after it).
  expect(refused).toBeGreaterThan(0);
  expect(served).toBeLessThanOrEqual(freeShare.burstLimit! + (freeShare.rateLimit! * (span + 50)) / 1_000);
  expect(usedOnPlan(api, 'free') - counted.free).toBe(served);
  expect(usedOnPlan(api, 'business') - counted.business).toBe(PLANS.business.limits!.perMinute);
});

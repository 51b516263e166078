/**
 * The usage-plan mapping (contract/plans.ts usagePlanThrottle) against a model of API Gateway's usage plans
 * (usage-plan-model.ts: "Throttle requests to your REST APIs" token bucket, a DAY quota counting every authorized
 * request) in front of the real limiter rules. Required property: for a client that honours X-RateLimit-* and
 * Retry-After, the gateway never rejects a request the app would admit; a client that ignores 429s is stopped.
 * The deployed numbers are checked with the same property in aws-rules.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_THROTTLE, BAN_POLICY, usagePlanThrottle, type PlanLimits } from '../../contract/plans.ts';
import { GatewayModel } from './usage-plan-model.ts';
import {
  EPOCH_MS,
  boundaryBursts,
  greedyClient,
  honouringClient,
  runawayClient,
  standardPlans,
  type Burst,
} from './usage-plan-clients.ts';

const DAY_MS = 86_400_000;

const limitsArb: fc.Arbitrary<PlanLimits> = fc.oneof(
  fc.constantFrom(...standardPlans().map((p) => p.limits)),
  fc
    .integer({ min: 1, max: 600 })
    .chain((perMinute) =>
      fc.integer({ min: perMinute, max: Math.min(perMinute * 1_440, 20_000) }).map((perDay) => ({ perMinute, perDay })),
    ),
);
const burstArb = (limits: PlanLimits): fc.Arbitrary<Burst> =>
  fc.record({
    gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 200_000 })),
    toBoundary: fc.boolean(),
    count: fc.integer({ min: 1, max: 2 * limits.perMinute + BAN_POLICY.fleetWorkers }),
    inFlight: fc.integer({ min: 1, max: BAN_POLICY.fleetWorkers }),
    prefer: fc.constantFrom('reset', 'retry-after'),
    latencyMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 500 })),
  });

describe('usage plans never reject what the app admits from a client that honours the headers', () => {
  it('holds for any plan, any quota-day alignment and any honouring client (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        limitsArb.chain((limits) =>
          fc.tuple(fc.constant(limits), fc.array(burstArb(limits), { minLength: 1, maxLength: 40 })),
        ),
        fc.integer({ min: 0, max: 86_399 }),
        fc.integer({ min: 0, max: DAY_MS - 1 }),
        async ([limits, bursts], quotaDayOffsetSec, startMs) => {
          const gw = new GatewayModel(usagePlanThrottle(limits), limits, quotaDayOffsetSec);
          await honouringClient(gw, bursts, EPOCH_MS + startMs);
          expect(gw.wronglyRejected).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it.each(standardPlans())(
    '$name: a whole minute at the end of a window and another right after the boundary, 429s included',
    async ({ limits, plan }) => {
      const gw = new GatewayModel(plan, limits);
      const outcomes = await honouringClient(gw, boundaryBursts(limits), EPOCH_MS + 10 * 60_000);
      expect(outcomes.filter((o) => o.by === 'app' && o.status === 429).length).toBeGreaterThan(0);
      expect(gw.wronglyRejected).toEqual([]);
      expect(gw.gatewayRejections).toBe(0);
    },
  );

  it.each(standardPlans())(
    '$name: two days of a client using up every window and both days stay under the quota, wherever the gateway day starts',
    async ({ limits, plan }) => {
      for (const offsetSec of [0, 1, 43_200, 86_399]) {
        const gw = new GatewayModel(plan, limits, offsetSec);
        await greedyClient(gw, EPOCH_MS, EPOCH_MS + 2 * DAY_MS);
        expect(gw.wronglyRejected, `quota day offset ${offsetSec} s`).toEqual([]);
        expect(Math.max(...gw.reachedPerQuotaDay.values())).toBeLessThanOrEqual(plan.quotaPerDay);
      }
    },
  );
});

describe('a client that ignores 429s is still stopped', () => {
  it.each(standardPlans())(
    '$name: a flood is throttled to the bucket (burst + rate per second)',
    async ({ limits, plan }) => {
      const gw = new GatewayModel(plan, limits);
      const seconds = 300;
      await runawayClient(gw, EPOCH_MS, 5, EPOCH_MS + seconds * 1000);
      expect(gw.gatewayRejections).toBeGreaterThan(0);
      const reached = [...gw.reachedPerQuotaDay.values()].reduce((a, b) => a + b, 0);
      expect(reached).toBeLessThanOrEqual(plan.burstLimit + plan.rateLimit * seconds);
    },
  );

  it('Free: a client sending at the bucket rate all day, ignoring its 429s and ban, meets QUOTA_EXCEEDED', async () => {
    const { limits, plan } = standardPlans().find((p) => p.name === 'free')!;
    const gw = new GatewayModel(plan, limits);
    await runawayClient(gw, EPOCH_MS, Math.ceil(1000 / plan.rateLimit), EPOCH_MS + 2 * DAY_MS);
    for (const reached of gw.reachedPerQuotaDay.values()) expect(reached).toBe(plan.quotaPerDay);
  }, 120_000);

  it.each(standardPlans())('$name: the quota binds before a day at the bucket rate', ({ plan }) => {
    expect(plan.quotaPerDay).toBeLessThan(plan.rateLimit * 86_400);
  });
});

describe('the mapping stays within what API Gateway accepts', () => {
  // "Amazon API Gateway quotas": per-client (usage plan) limits cannot be higher than the account-level throttle;
  // AWS::ApiGateway::UsagePlan: BurstLimit and quota Limit are Integers (minimum 0), RateLimit a Number.
  it.each(standardPlans())('$name: integers within the account-level throttle, and guaranteed', ({ plan }) => {
    expect(plan.guaranteed).toBe(true);
    expect(
      Number.isInteger(plan.burstLimit) && Number.isInteger(plan.quotaPerDay) && Number.isInteger(plan.rateLimit),
    ).toBe(true);
    expect(plan.burstLimit).toBeLessThanOrEqual(ACCOUNT_THROTTLE.burstLimit);
    expect(plan.rateLimit).toBeLessThanOrEqual(ACCOUNT_THROTTLE.rateLimit);
    expect(plan.quotaPerDay).toBeLessThan(2 ** 31);
  });

  it('caps limits above the account-level throttle and says the guarantee is lost', () => {
    const t = usagePlanThrottle({ perMinute: 1_000_000, perDay: 1_000_000_000 });
    expect(t).toMatchObject({ burstLimit: ACCOUNT_THROTTLE.burstLimit, guaranteed: false });
    expect(t.quotaPerDay).toBeLessThan(2 ** 31);
  });
});

/**
 * The capacity model (lib/config/capacity.ts) on both stages at the mix we sell: every hop of ours at or above what
 * the account's quotas let through, and the ceilings naming what to ask for. Each change a release could make to the
 * plans, the pools, the stage or WAF that would leave a hop below the contract is played here and must be caught.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_FREE_SHARE, MAX_CUSTOM_LIMITS, PLAN_NAMES } from '../../contract/plans.ts';
import { ROUTES } from '../../contract/routes.ts';
import {
  DEFAULT_ACCOUNT_QUOTAS,
  REFERENCE_MIX,
  capacityRows,
  edgeFor,
  fiveMinuteDemand,
  planThrottles,
  shortfalls,
  type StageCapacity,
} from '../../lib/config/capacity.ts';
import { STAGES, STAGE_NAMES, contextProblems, withAccountQuotas } from '../../lib/config/stages.ts';
import { requestUnitCeiling } from '../../lib/constructs/data-tables.ts';

const capacityOf = (name: keyof typeof STAGES): StageCapacity => {
  const s = STAGES[name];
  return { ...s, tableMaxUnits: requestUnitCeiling(s.stageThrottle, ROUTES.length) };
};

describe.each(STAGE_NAMES)('%s at the reference mix', (name) => {
  const rows = capacityRows(capacityOf(name), REFERENCE_MIX);

  it('has every hop of ours at or above what the account lets through', () => {
    expect(shortfalls(rows).map((r) => `${r.hop}: ${r.capacity} < ${r.demand}`)).toEqual([]);
    // Every hop a request crosses is there.
    for (const hop of ['WAF: per key', 'WAF: per IP', 'Stage throttle: rate', 'Stage throttle: burst', 'Authorizer'])
      expect(
        rows.some((r) => r.hop.startsWith(hop)),
        hop,
      ).toBe(true);
    for (const plan of ['Free', 'Pro', 'Business', 'Enterprise'])
      expect(rows.filter((r) => r.hop === `Usage plan: ${plan} (rate)`)).toHaveLength(1);
  });

  it('names the quota increases the mix needs, and only account quotas fall short', () => {
    const short = rows.filter((r) => r.headroom < 1);
    expect(short.every((r) => r.ceiling)).toBe(true);
    const api = rows.find((r) => r.hop === 'Account: API Gateway throttle')!;
    // 900,000 x 1/s + 70,000 x 5/s + 25,000 x 16.7/s + 5,000 x 83.3/s.
    expect(api.demand).toBe(2_083_334);
    expect(api.raise).toContain('2,083,334 req/s');
    expect(rows.find((r) => r.hop === 'Account: Lambda concurrency')!.raise).toContain('10,000');
  });
});

describe('the edge sized from the account quotas', () => {
  it('at the default quotas: 125 per method, 500 reserved, 500 left to the functions', () => {
    const e = edgeFor(DEFAULT_ACCOUNT_QUOTAS, 4);
    expect(e.stageThrottle).toEqual({ rateLimit: 10_000, burstLimit: 125 });
    expect(e.authorizerReservedConcurrency).toBe(500);
    expect(e.atOnce).toBe(500);
  });

  it('with 10,000 executions granted: the account’s whole bucket at once, through the authorizer and a function', () => {
    const stage = withAccountQuotas(STAGES.production, (k) =>
      k === 'animal-store:production:lambdaConcurrency' ? '10000' : undefined,
    );
    expect(stage.stageThrottle).toEqual({ rateLimit: 10_000, burstLimit: 5_000 });
    expect(stage.authorizerReservedConcurrency).toBe(5_000);
    const rows = capacityRows(
      { ...stage, tableMaxUnits: requestUnitCeiling(stage.stageThrottle, ROUTES.length) },
      REFERENCE_MIX,
    );
    expect(shortfalls(rows)).toEqual([]);
    expect(rows.find((r) => r.hop === 'Account: Lambda concurrency')!.headroom).toBeGreaterThanOrEqual(1);
  });

  it('WAF’s per-key limit holds the largest contract the admin tool sells, its fleet’s 429s included', () => {
    for (const name of STAGE_NAMES) {
      expect(STAGES[name].wafRequestsPerKeyPer5Minutes).toBeGreaterThanOrEqual(fiveMinuteDemand(MAX_CUSTOM_LIMITS));
      // An Enterprise key sold 5,000/min: six minute windows of it and its 429s.
      expect(STAGES[name].wafRequestsPerKeyPer5Minutes).toBeGreaterThanOrEqual(6 * (5_000 + 5_000));
    }
  });
});

describe("each plan's usage plan", () => {
  it('paying plans get the stage’s whole share, Free half of it', () => {
    for (const name of STAGE_NAMES) {
      const t = planThrottles(STAGES[name]);
      expect(STAGES[name].freeShare).toBe(DEFAULT_FREE_SHARE);
      for (const plan of ['pro', 'business', 'enterprise'] as const)
        expect(t[plan]).toEqual({ rateLimit: 10_000, burstLimit: 125 * ROUTES.length });
      expect(t.free).toEqual({ rateLimit: 5_000, burstLimit: (125 * ROUTES.length) / 2 });
    }
  });

  it('Free keys at their full contract, however many, leave the paying plans the rest of the stage', () => {
    // 900,000 Free keys at 1 req/s want 180 times the stage: the Free plan's bucket refuses what passes its share.
    const stage = STAGES.production;
    const t = planThrottles(stage);
    const freeContract = (REFERENCE_MIX.free * 60) / 60;
    expect(freeContract).toBeGreaterThan(stage.stageThrottle.rateLimit);
    expect(stage.stageThrottle.rateLimit - Math.min(freeContract, t.free.rateLimit)).toBe(5_000);
  });

  it('the Free share comes from context, and a share out of range is named', () => {
    const context = (share: string) => (k: string) => (k === 'animal-store:staging:freeShare' ? share : undefined);
    expect(planThrottles(withAccountQuotas(STAGES.staging, context('0.25'))).free.rateLimit).toBe(2_500);
    expect(withAccountQuotas(STAGES.staging, context('1.5')).freeShare).toBe(DEFAULT_FREE_SHARE);
    expect(contextProblems('staging', context('0'))).toEqual([
      '-c animal-store:staging:freeShare="0" is not a share above 0 and at most 1 (e.g. 0.5)',
    ]);
  });

  it('has one per plan', () => {
    expect(Object.keys(planThrottles(STAGES.staging)).sort()).toEqual([...PLAN_NAMES].sort());
  });
});

describe('a change that leaves a hop below the contract is caught', () => {
  const base = capacityOf('production');
  const caught = (stage: StageCapacity, mix = REFERENCE_MIX) => shortfalls(capacityRows(stage, mix)).map((r) => r.hop);

  it('a WAF per-key limit below the largest contract (the 14,200 that blocked a 5,000/min key at 2,840)', () => {
    expect(caught({ ...base, wafRequestsPerKeyPer5Minutes: 14_200 })).toEqual(['WAF: per key (5 min)']);
  });

  it('a stage throttle below the account’s rate, or a bucket the reservation cannot hold at once', () => {
    expect(caught({ ...base, stageThrottle: { rateLimit: 2_000, burstLimit: 125 } })).toContain(
      'Stage throttle: rate per method',
    );
    expect(caught({ ...base, stageThrottle: { rateLimit: 10_000, burstLimit: 5_000 } })).toEqual(
      expect.arrayContaining(['Authorizer: reserved concurrency', 'Functions: unreserved concurrency']),
    );
  });

  it('an authorizer reservation sized by rate x duration alone (the 10 that answered honest bursts 503)', () => {
    expect(caught({ ...base, authorizerReservedConcurrency: 10 })).toEqual(['Authorizer: reserved concurrency']);
  });

  it('a plan whose exact keys would pass a partition’s writes', () => {
    // The limiter's exact path is capped at 1,000/min whatever a plan says, so a bigger plan moves to leases.
    const rows = capacityRows(base, { ...REFERENCE_MIX, enterpriseLimits: { perMinute: 600_000, perDay: 1e9 } });
    expect(rows.find((r) => r.hop === 'Limiter: one counter item')!.headroom).toBeGreaterThanOrEqual(1);
  });
});

it('the previous release’s figures: every guard the contract was never checked against falls short', () => {
  // Staging as 89d4f5e deployed it: a stage throttle of 100 req/s, the authorizer reserved at rate x 25 ms, WAF's
  // per-key rule at Business's 5 minutes.
  const rows = capacityRows(
    {
      ...capacityOf('staging'),
      stageThrottle: { rateLimit: 100, burstLimit: 5_000 },
      authorizerReservedConcurrency: 10,
      wafRequestsPerKeyPer5Minutes: 14_200,
    },
    REFERENCE_MIX,
  );
  expect(shortfalls(rows).map((r) => r.hop)).toEqual([
    'WAF: per key (5 min)',
    'Stage throttle: rate per method',
    'Authorizer: reserved concurrency',
    'Functions: unreserved concurrency',
    ...['Free', 'Pro', 'Business', 'Enterprise'].map((p) => `Usage plan: ${p} (rate)`),
  ]);
});

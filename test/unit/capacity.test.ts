/**
 * The capacity model (lib/config/capacity.ts) on both stages at the mix we sell: every hop of ours at or above what
 * the account's quotas let through, and the ceilings naming what to ask for. Each change a release could make to the
 * plans, the pools, the stage or WAF that would leave a hop below the contract is played here and must be caught.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_FREE_SHARE, KEY_BURST, MAX_CUSTOM_LIMITS, OPERATION_COUNT, PLAN_NAMES } from '../../contract/plans.ts';
import { LIMITER_GRANT } from '../../contract/operations/common.ts';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { PETS_TABLE, STATE_TABLE } from '../../contract/tables.ts';
import {
  DEFAULT_ACCOUNT_QUOTAS,
  LARGEST_STANDARD_LIMITS,
  REFERENCE_MIX,
  UNITS_PER_CALL,
  actionUnits,
  capacityRows,
  dearestCall,
  edgeFor,
  fiveMinuteDemand,
  planThrottles,
  shortfalls,
  unitsOf,
  type StageCapacity,
} from '../../lib/config/capacity.ts';
import { STAGES, STAGE_NAMES, contextProblems, withAccountQuotas } from '../../lib/config/stages.ts';
import { requestUnitCeiling } from '../../lib/constructs/data-tables.ts';
import { undersized } from '../../lib/stacks/app.ts';

const capacityOf = (name: keyof typeof STAGES): StageCapacity => {
  const s = STAGES[name];
  return { ...s, tableMaxUnits: requestUnitCeiling(s.stageThrottle, ROUTES.length) };
};

describe.each(STAGE_NAMES)('%s at the reference mix', (name) => {
  const rows = capacityRows(capacityOf(name), REFERENCE_MIX);

  it('has every hop of ours at or above what the account lets through', () => {
    expect(shortfalls(rows).map((r) => `${r.hop}: ${r.capacity} < ${r.demand}`)).toEqual([]);
    // Every hop a request crosses is there.
    for (const hop of [
      'WAF: per key',
      'WAF: per IP',
      'WAF: per listed address',
      'Stage throttle: rate',
      'Stage throttle: every method',
      'Stage throttle: burst',
      'Authorizer',
    ])
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
  it('at the default quotas: 2,500/s and 125 per method, 500 reserved, 500 left to the functions', () => {
    const e = edgeFor(DEFAULT_ACCOUNT_QUOTAS, 1, 4);
    expect(e.stageThrottle).toEqual({ rateLimit: 2_500, burstLimit: 125 });
    expect(e.authorizerReservedConcurrency).toBe(500);
    expect(e.atOnce).toBe(500);
  });

  it('the per-method rates add up to at most the stage’s share, so a flood on one method leaves the others theirs', () => {
    expect(OPERATION_COUNT).toBe(ROUTES.length);
    for (const share of [1, 0.8, 0.2, 0.05]) {
      const e = edgeFor(DEFAULT_ACCOUNT_QUOTAS, share);
      expect(e.stageThrottle.rateLimit * ROUTES.length).toBeLessThanOrEqual(DEFAULT_ACCOUNT_QUOTAS.apiRate * share);
      // The largest contract sold fits one method of a stage with the whole account.
      if (share === 1) expect(e.stageThrottle.rateLimit).toBeGreaterThanOrEqual(MAX_CUSTOM_LIMITS.perMinute / 60);
    }
    // Staging and production sharing one account at 0.2 and 0.8: together never more than the account.
    const given = (stage: string, share: string) => (k: string) =>
      k === `animal-store:${stage}:accountShare` ? share : undefined;
    const staging = withAccountQuotas(STAGES.staging, given('staging', '0.2'));
    const production = withAccountQuotas(STAGES.production, given('production', '0.8'));
    const rate = (s: typeof staging) => s.stageThrottle.rateLimit * ROUTES.length;
    expect(rate(staging) + rate(production)).toBeLessThanOrEqual(DEFAULT_ACCOUNT_QUOTAS.apiRate);
    expect(staging.authorizerReservedConcurrency + production.authorizerReservedConcurrency).toBeLessThanOrEqual(
      DEFAULT_ACCOUNT_QUOTAS.lambdaConcurrency - 100,
    );
    expect(contextProblems('staging', given('staging', '1.2'))).toEqual([
      '-c animal-store:staging:accountShare="1.2" is not a share above 0 and at most 1 (e.g. 0.2)',
    ]);
  });

  it('synth warns, naming each hop, when a share leaves the stage below the contracts sold', () => {
    for (const name of STAGE_NAMES) expect(undersized(STAGES[name])).toEqual([]);
    const shared = withAccountQuotas(STAGES.staging, (k) =>
      k === 'animal-store:staging:accountShare' ? '0.2' : undefined,
    );
    const lines = undersized(shared);
    expect(lines.some((l) => l.startsWith('AnimalStore-staging: Stage throttle: rate per method is 500 req/s'))).toBe(
      true,
    );
    expect(lines.every((l) => l.includes('npm run capacity -- --stage staging'))).toBe(true);
    // A tiny share still sizes something: no negative or zero capacity.
    const tiny = withAccountQuotas(STAGES.staging, (k) =>
      k === 'animal-store:staging:accountShare' ? '0.001' : undefined,
    );
    expect(tiny.stageThrottle.rateLimit).toBeGreaterThan(0);
    expect(tiny.stageThrottle.burstLimit).toBeGreaterThan(0);
    expect(tiny.authorizerReservedConcurrency).toBeGreaterThan(0);
  });

  it('a key’s declared burst fits twice in a method’s bucket', () => {
    for (const name of STAGE_NAMES) expect(STAGES[name].stageThrottle.burstLimit).toBeGreaterThanOrEqual(2 * KEY_BURST);
  });

  it('customers’ egress addresses come from context, and one that is not an IPv4 block is named', () => {
    const ctx = (v: string) => (k: string) => (k === 'animal-store:production:customerEgress' ? v : undefined);
    expect(withAccountQuotas(STAGES.production, ctx('203.0.113.7, 198.51.100.0/24')).customerEgress).toEqual([
      '203.0.113.7/32',
      '198.51.100.0/24',
    ]);
    // WAF refuses /0; a block larger than /16 would give much of a network the largest contract.
    for (const wide of ['0.0.0.0/0', '10.0.0.0/8', '10.01.0.0/16'])
      expect(contextProblems('production', ctx(wide)), wide).toHaveLength(1);
    expect(contextProblems('production', ctx('10.1.0.0/16,192.0.2.1'))).toEqual([]);
    expect(contextProblems('production', ctx('203.0.113.7,example.com'))).toEqual([
      '-c animal-store:production:customerEgress: "example.com/32" is not an IPv4 CIDR block of /16 or smaller',
    ]);
  });

  it('with 10,000 executions granted: the account’s whole bucket at once, through the authorizer and a function', () => {
    const stage = withAccountQuotas(STAGES.production, (k) =>
      k === 'animal-store:production:lambdaConcurrency' ? '10000' : undefined,
    );
    expect(stage.stageThrottle).toEqual({ rateLimit: 2_500, burstLimit: 5_000 / ROUTES.length });
    expect(stage.authorizerReservedConcurrency).toBe(5_000);
    const rows = capacityRows(
      { ...stage, tableMaxUnits: requestUnitCeiling(stage.stageThrottle, ROUTES.length) },
      REFERENCE_MIX,
    );
    expect(shortfalls(rows)).toEqual([]);
    expect(rows.find((r) => r.hop === 'Account: Lambda concurrency')!.headroom).toBeGreaterThanOrEqual(1);
  });

  it('WAF lets one unlisted source send one Business key’s contract, and a listed address the largest sold', () => {
    for (const name of STAGE_NAMES) {
      expect(STAGES[name].wafRequestsPerIpPer5Minutes).toBe(fiveMinuteDemand(LARGEST_STANDARD_LIMITS));
      expect(STAGES[name].wafRequestsPerKeyPer5Minutes).toBe(fiveMinuteDemand(LARGEST_STANDARD_LIMITS));
      // Six minute windows of Business's 1,000 and its fleet's 429s: 40 req/s on average.
      expect(STAGES[name].wafRequestsPerIpPer5Minutes).toBe(6 * (1_000 + 1_000));
      expect(STAGES[name].wafListedRequestsPer5Minutes).toBeGreaterThanOrEqual(fiveMinuteDemand(MAX_CUSTOM_LIMITS));
    }
  });

  it('names, for each shared hop, how many sources fill it', () => {
    const rows = capacityRows(capacityOf('production'), REFERENCE_MIX);
    const sources = (hop: string) => rows.find((r) => r.hop === hop)!.sources;
    // 2,500/s per method at 40 req/s per address or key past WAF.
    expect(sources('Stage throttle: rate per method')).toMatch(/^63 addresses or 63 keys/);
    expect(sources('Stage throttle: every method together')).toMatch(/^250 addresses or 250 keys/);
    expect(sources('WAF: per IP (5 min, every request)')).toMatch(/^per source/);
    for (const r of rows) expect(r.sources.length, r.hop).toBeGreaterThan(0);
  });
});

describe("each plan's usage plan", () => {
  it('paying plans get the stage’s whole share, Free half of it', () => {
    for (const name of STAGE_NAMES) {
      const t = planThrottles(STAGES[name]);
      expect(STAGES[name].freeShare).toBe(DEFAULT_FREE_SHARE);
      for (const plan of ['pro', 'business', 'enterprise'] as const)
        expect(t[plan]).toEqual({ rateLimit: 2_500 * ROUTES.length, burstLimit: 125 * ROUTES.length });
      expect(t.free).toEqual({ rateLimit: 5_000, burstLimit: (125 * ROUTES.length) / 2 });
    }
  });

  it('Free keys at their full contract, however many, leave the paying plans the rest of the stage', () => {
    // 900,000 Free keys at 1 req/s want 180 times the stage: the Free plan's bucket refuses what passes its share.
    const stage = STAGES.production;
    const t = planThrottles(stage);
    const freeContract = (REFERENCE_MIX.free * 60) / 60;
    expect(freeContract).toBeGreaterThan(t.pro.rateLimit);
    expect(t.pro.rateLimit - Math.min(freeContract, t.free.rateLimit)).toBe(5_000);
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

  it('a WAF limit per source below one Business key’s contract, or a listed limit below the largest sold', () => {
    expect(caught({ ...base, wafRequestsPerKeyPer5Minutes: 2_000 })).toEqual(['WAF: per key (5 min)']);
    expect(caught({ ...base, wafRequestsPerIpPer5Minutes: 2_000 })).toEqual(['WAF: per IP (5 min, every request)']);
    expect(caught({ ...base, wafListedRequestsPer5Minutes: 14_200 })).toEqual(['WAF: per listed address (5 min)']);
  });

  it('per-method rates adding up past the stage’s share, a method below the largest contract, or a small bucket', () => {
    expect(caught({ ...base, stageThrottle: { rateLimit: 10_000, burstLimit: 125 } })).toContain(
      'Stage throttle: every method together',
    );
    expect(caught({ ...base, stageThrottle: { rateLimit: 2_000, burstLimit: 125 } })).toContain(
      'Stage throttle: rate per method',
    );
    expect(caught({ ...base, stageThrottle: { rateLimit: 2_500, burstLimit: 60 } })).toContain(
      'Stage throttle: burst per method',
    );
  });

  it('a bucket the reservation cannot hold at once', () => {
    expect(caught({ ...base, stageThrottle: { rateLimit: 2_500, burstLimit: 1_250 } })).toEqual(
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

it('the previous release’s figures: a method at the account’s whole rate, WAF’s per-IP rule counting no key', () => {
  // Staging as 307e34a deployed it: every method at 10,000/s, the per-IP rule at 2,000 requests without a key (so
  // none of a key's shape), the per-key rule at the account's 5 minutes.
  const rows = capacityRows(
    {
      ...capacityOf('staging'),
      stageThrottle: { rateLimit: 10_000, burstLimit: 125 },
      wafRequestsPerIpPer5Minutes: 2_000,
      wafRequestsPerKeyPer5Minutes: 3_005_000,
    },
    REFERENCE_MIX,
  );
  expect(shortfalls(rows).map((r) => r.hop)).toEqual([
    'WAF: per IP (5 min, every request)',
    'Stage throttle: every method together',
  ]);
});

describe('units per call, from the route entries’ grants', () => {
  const functions = [...ROUTES.map((r) => ({ name: r.operationId, access: r.access })), AUTHORIZER];

  it('is the most any function’s call takes of one table, reads and writes apart', () => {
    const all = functions.flatMap((f) => unitsOf(f.access));
    expect(Math.max(...all.map((u) => u.units))).toBe(UNITS_PER_CALL);
    // Every operation's grants include the limiter's write, so its units count it.
    for (const r of ROUTES) expect(r.access.tables, r.operationId).toContain(LIMITER_GRANT);
  });

  it('adds up the writes to a table in one call (the limiter’s and a transaction’s), and takes the dearest read', () => {
    const write = actionUnits('dynamodb:PutItem', true).units;
    const access = {
      tables: [
        LIMITER_GRANT,
        { table: STATE_TABLE, actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'], transactional: true },
        { table: PETS_TABLE, actions: ['dynamodb:GetItem'] },
        { table: PETS_TABLE, actions: ['dynamodb:Query'] },
      ],
    } as const;
    expect(unitsOf(access)).toEqual([
      { table: STATE_TABLE.id, kind: 'write', units: actionUnits('dynamodb:UpdateItem').units + write },
      { table: PETS_TABLE.id, kind: 'read', units: actionUnits('dynamodb:Query').units },
    ]);
  });

  it('rises with an operation that does more table work than any today', () => {
    const heavy = {
      name: 'testHeavy',
      access: {
        tables: [
          LIMITER_GRANT,
          ...Array.from({ length: UNITS_PER_CALL }, () => ({
            table: STATE_TABLE,
            actions: ['dynamodb:PutItem' as const],
            transactional: true,
          })),
        ],
      },
    };
    const dearest = dearestCall([...functions, heavy]);
    expect(dearest).toMatchObject({ name: 'testHeavy', table: STATE_TABLE.id, kind: 'write' });
    expect(dearest.units).toBeGreaterThan(UNITS_PER_CALL);
  });

  it('refuses an action it has no cost for, naming it', () => {
    expect(() => actionUnits('dynamodb:BatchWriteItem')).toThrow(/^dynamodb:BatchWriteItem: no request-unit cost/);
  });
});

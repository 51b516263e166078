/**
 * The Free key pool on both stages' templates. AWS rules encoded: API keys per account and Region are capped at
 * 10,000 and cannot be raised ("Amazon API Gateway quotas"), so the stack creates a fixed pool instead of a key per
 * Free customer; with apiKeySourceType AUTHORIZER, API Gateway answers 403 when the authorizer's usageIdentifierKey
 * names no API key in a usage plan of the stage, so every value the authorizer can return for a Free key must be a
 * pool member's, in the pool's usage plan on this API's stage. CloudFormation allows 500 resources per template.
 */
import { describe, expect, it } from 'vitest';
import {
  FREE_KEY_POOL,
  PAYING_POOLS,
  payingPoolKeyValue,
  poolKeyValue,
  poolMemberOf,
  poolThrottle,
} from '../../contract/key-pool.ts';
import { PAYING_PROBATION, PROBATION, payingProbationKeyValue, probationKeyValue } from '../../contract/probation.ts';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';
import {
  authenticate,
  gateUsageKey,
  generateKey,
  generateKeyId,
  hashKey,
  type KeyRecord,
} from '../../lambdas/domain/keys.ts';
import { resources, synthesizeStages, templates } from './stack-fixture.ts';
import { payingPoolMemberLogicalId, poolMemberLogicalId } from '../../lib/constructs/usage-plan-ids.ts';

synthesizeStages();

describe.each(STAGE_NAMES)('stage %s', (stageName) => {
  const stage = STAGES[stageName];
  const t = () => templates[stageName];
  const poolPlan = () => {
    const plans = resources(t(), 'AWS::ApiGateway::UsagePlan').filter(
      ([, p]) => p.Properties.UsagePlanName === `${stage.stackName}-${FREE_KEY_POOL.displayName}`,
    );
    expect(plans).toHaveLength(1);
    return plans[0]!;
  };
  /** The values of the API keys in the pool's usage plan. */
  const poolValues = () => {
    const [planId] = poolPlan();
    const keys = new Map(resources(t(), 'AWS::ApiGateway::ApiKey').map(([id, k]) => [id, k.Properties]));
    return resources(t(), 'AWS::ApiGateway::UsagePlanKey')
      .filter(([, k]) => k.Properties.UsagePlanId.Ref === planId)
      .map(([, k]) => keys.get(k.Properties.KeyId.Ref)!.Value as string);
  };

  it("puts every pool member's API key, enabled, in the pool's usage plan on the API's stage", () => {
    const values = poolValues();
    // The members, and the probation keys that keep keys banned in the last day off them (contract/probation.ts).
    expect(values.sort()).toEqual(
      [
        ...Array.from({ length: FREE_KEY_POOL.members }, (_, m) => poolKeyValue(stage.name, m)),
        ...Array.from({ length: PROBATION.shards }, (_, n) => probationKeyValue(stage.name, n)),
      ].sort(),
    );
    for (const [, k] of resources(t(), 'AWS::ApiGateway::ApiKey')) expect(k.Properties.Enabled).toBe(true);
    const [, plan] = poolPlan();
    const [[apiId]] = resources(t(), 'AWS::ApiGateway::RestApi');
    expect(plan.Properties.ApiStages).toEqual([
      expect.objectContaining({ ApiId: { Ref: apiId }, Stage: expect.anything() }),
    ]);
    const expected = poolThrottle();
    expect(plan.Properties.Throttle).toEqual({ RateLimit: expected.rateLimit, BurstLimit: expected.burstLimit });
    expect(plan.Properties.Quota).toEqual({ Limit: expected.quotaPerDay, Period: 'DAY' });
  });

  it('the authorizer names, for any Free key, an API key of that pool', async () => {
    const values = new Set(poolValues());
    for (let i = 0; i < 500; i++) {
      const key = generateKey();
      const record: KeyRecord = {
        hash: hashKey(key),
        keyId: generateKeyId(),
        owner: 'o',
        plan: 'free',
        status: 'active',
        createdAt: '2026-01-01T00:00:00.000Z',
      };
      // The authorizer runs with STAGE = the stage's name (lib/constructs/api-function.ts).
      const auth = await authenticate({ getByHash: async () => record }, `Bearer ${key}`, stage.name);
      expect(values.has(auth!.usageIdentifierKey), `member ${poolMemberOf(record.keyId)}`).toBe(true);
    }
  });

  it("puts each paying pool's members and probation shards in that pool's usage plan, sized for its plan", () => {
    const keys = new Map(resources(t(), 'AWS::ApiGateway::ApiKey').map(([id, k]) => [id, k.Properties]));
    for (const [plan, pool] of Object.entries(PAYING_POOLS) as Array<['pro' | 'business', { displayName: string }]>) {
      const [[planId, usagePlan]] = resources(t(), 'AWS::ApiGateway::UsagePlan').filter(
        ([, p]) => p.Properties.UsagePlanName === `${stage.stackName}-${pool.displayName}`,
      );
      const values = resources(t(), 'AWS::ApiGateway::UsagePlanKey')
        .filter(([, k]) => k.Properties.UsagePlanId.Ref === planId)
        .map(([, k]) => keys.get(k.Properties.KeyId.Ref)!.Value as string);
      expect(values.sort()).toEqual(
        [
          ...Array.from({ length: PAYING_POOLS[plan].members }, (_, m) => payingPoolKeyValue(stage.name, plan, m)),
          ...Array.from({ length: PAYING_PROBATION.shards }, (_, n) => payingProbationKeyValue(stage.name, plan, n)),
        ].sort(),
      );
      // A key on probation keeps what its plan's customers get, not the Free pool's (contract/probation.ts).
      const expected = poolThrottle(plan);
      expect(usagePlan.Properties.Quota).toEqual({ Limit: expected.quotaPerDay, Period: 'DAY' });
    }
  });

  it('the authorizer names, for any Free, Pro or Business key, counted or on probation, an API key of its pool', async () => {
    const onPlans = new Set(
      resources(t(), 'AWS::ApiGateway::UsagePlanKey').map(([, k]) => k.Properties.KeyId.Ref as string),
    );
    const values = new Set(
      resources(t(), 'AWS::ApiGateway::ApiKey')
        .filter(([id]) => onPlans.has(id))
        .map(([, k]) => k.Properties.Value as string),
    );
    for (const plan of ['free', 'pro', 'business'] as const)
      for (let i = 0; i < 200; i++) {
        const key = generateKey();
        const record: KeyRecord = {
          hash: hashKey(key),
          keyId: generateKeyId(),
          owner: 'o',
          plan,
          status: 'active',
          createdAt: '2030-01-01T00:00:00.000Z',
        };
        const auth = (await authenticate({ getByHash: async () => record }, `Bearer ${key}`, stage.name))!;
        // API Gateway answers 403 for a usageIdentifierKey on no usage plan of the stage.
        for (const decision of ['count', 'probation'] as const)
          expect(values.has(gateUsageKey(auth, decision, stage.name)), `${plan} ${decision}`).toBe(true);
      }
  });

  it('keeps the pool within the 10,000 API keys and the 500 resources of a template, with stable logical ids', () => {
    const apiKeys = resources(t(), 'AWS::ApiGateway::ApiKey');
    // The pools' members (Free, Pro, Business), the spent-keys key (test/infra/spent-keys.test.ts) and each pool's
    // probation shards: a constant of the template, whatever the number of customers.
    const paying = Object.values(PAYING_POOLS).reduce((n, p) => n + p.members + PAYING_PROBATION.shards, 0);
    expect(apiKeys).toHaveLength(FREE_KEY_POOL.members + paying + 1 + PROBATION.shards);
    for (const [plan, pool] of Object.entries(PAYING_POOLS))
      for (let m = 0; m < pool.members; m++) {
        const found = apiKeys.filter(([logicalId]) =>
          logicalId.includes(payingPoolMemberLogicalId(pool.logicalPrefix, m)),
        );
        expect(found.map(([, k]) => k.Properties.Value)).toEqual([payingPoolKeyValue(stage.name, plan as 'pro', m)]);
      }
    expect(Object.keys(t().toJSON().Resources).length).toBeLessThan(500);
    // Member n's logical id names n: growing the pool adds keys, never replaces one a cached result names.
    for (let m = 0; m < FREE_KEY_POOL.members; m++) {
      const id = `Member${String(m).padStart(4, '0')}`;
      const found = apiKeys.filter(([logicalId]) => logicalId.includes(`FreePool${id}`));
      expect(found.map(([, k]) => k.Properties.Value)).toEqual([poolKeyValue(stage.name, m)]);
    }
  });

  // CreateApiKey is limited to 5 calls/s per account ("Amazon API Gateway quotas"), and concurrent
  // CreateUsagePlanKey calls on one plan fail with ConflictException ("concurrent modification"): CloudFormation
  // creates resources without a dependency between them in parallel, so each key waits for the one before it. A
  // key's value is unique per account and Region, so a replacement (create-before-delete) would fail: the ids are
  // pinned to the member number and the names carry no stack name.
  it('creates the pool one key at a time, under pinned ids', () => {
    const all = t().toJSON().Resources as Record<string, { Type: string; DependsOn?: string[]; Properties: any }>;
    for (let m = 0; m < FREE_KEY_POOL.members; m++) {
      const id = poolMemberLogicalId(m);
      const previous = poolMemberLogicalId(m - 1);
      expect(all[id]?.Type, id).toBe('AWS::ApiGateway::ApiKey');
      expect(all[`${id}Plan`]?.Type, id).toBe('AWS::ApiGateway::UsagePlanKey');
      expect(all[id]!.Properties.Name).toBe(`${stage.name}-${id}`);
      if (m > 0) {
        expect(all[id]!.DependsOn, id).toContain(previous);
        expect(all[`${id}Plan`]!.DependsOn, id).toContain(`${previous}Plan`);
      }
    }
  });
});

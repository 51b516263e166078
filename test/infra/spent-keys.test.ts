/**
 * A key whose day quota is spent, or which is banned, must be refused before its request counts against a usage plan
 * it shares (a Free key's pool member). How API Gateway reads the template: with apiKeySourceType AUTHORIZER, the
 * only API key a request counts against is the one the authorizer names, and only once the authorizer has allowed
 * it; a Deny is answered ACCESS_DENIED before any usage plan sees the request. So on both stages:
 * - every method that counts against a usage plan runs the key authorizer first;
 * - the authorizer is told the stage its keys are named for, and the spent-keys key it names for a spent key is on
 *   one usage plan only, of its own, whose day quota is spent by the day's first request and which no other key
 *   shares;
 * - a banned key is denied (ACCESS_DENIED is answered 429 key_banned).
 * test/integration/spent-key.test.ts floods the local gateway built from this template with a spent Free key.
 */
import { describe, expect, it } from 'vitest';
import { FREE_KEY_POOL, SPENT_KEYS, spentKeyValue } from '../../contract/key-pool.ts';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';
import { resources, synthesizeStages, templates } from './stack-fixture.ts';

synthesizeStages();

describe.each(STAGE_NAMES)('stage %s', (stageName) => {
  const stage = STAGES[stageName];
  const t = () => templates[stageName];

  it('counts a request against a usage plan only after the key authorizer has allowed it', () => {
    const [[, api]] = resources(t(), 'AWS::ApiGateway::RestApi');
    expect(api!.Properties.ApiKeySourceType).toBe('AUTHORIZER');
    const [[authorizerId, authorizer]] = resources(t(), 'AWS::ApiGateway::Authorizer');
    expect(authorizer!.Properties.Type).toBe('TOKEN');
    const counted = resources(t(), 'AWS::ApiGateway::Method').filter(([, m]) => m.Properties.ApiKeyRequired);
    expect(counted.length).toBeGreaterThan(0);
    for (const [id, m] of counted) {
      expect(m.Properties.AuthorizationType, id).toBe('CUSTOM');
      expect(m.Properties.AuthorizerId, id).toEqual({ Ref: authorizerId });
    }
    // The authorizer's denial is answered 429 key_banned, never the request's function.
    const denied = resources(t(), 'AWS::ApiGateway::GatewayResponse').find(
      ([, r]) => r.Properties.ResponseType === 'ACCESS_DENIED',
    );
    expect(denied![1].Properties.StatusCode).toBe('429');
    expect(denied![1].Properties.ResponseTemplates['application/json']).toContain('key_banned');
  });

  it("puts the spent-keys API key alone on a usage plan of its own, whose day quota the day's first request spends", () => {
    const keys = resources(t(), 'AWS::ApiGateway::ApiKey').filter(
      ([, k]) => k.Properties.Value === spentKeyValue(stage.name),
    );
    expect(keys).toHaveLength(1);
    const [keyId] = keys[0]!;
    const planKeys = resources(t(), 'AWS::ApiGateway::UsagePlanKey');
    const ofKey = planKeys.filter(([, k]) => k.Properties.KeyId.Ref === keyId);
    expect(ofKey).toHaveLength(1);
    const planId = ofKey[0]![1].Properties.UsagePlanId.Ref;
    expect(planKeys.filter(([, k]) => k.Properties.UsagePlanId.Ref === planId)).toHaveLength(1);
    const plan = resources(t(), 'AWS::ApiGateway::UsagePlan').find(([id]) => id === planId)![1];
    expect(plan.Properties.UsagePlanName).toBe(`${stage.stackName}-${SPENT_KEYS.displayName}`);
    expect(plan.Properties.Quota).toEqual({ Limit: SPENT_KEYS.quotaPerDay, Period: 'DAY' });
    // No throttle of its own: its refusals are QUOTA_EXCEEDED (quota_exceeded), never THROTTLED (rate_limited).
    expect(plan.Properties.Throttle).toBeUndefined();
    // Not the pool's plan: a spent Free key counts against no pool member.
    expect(plan.Properties.UsagePlanName).not.toContain(FREE_KEY_POOL.displayName);
  });

  it('tells the authorizer the stage its keys are named for, and caches its decisions for less than the day margin', () => {
    const fns = resources(t(), 'AWS::Lambda::Function').filter(
      ([, f]) => f.Properties.Environment?.Variables?.USAGE_KEYS_STAGE !== undefined,
    );
    expect(fns).toHaveLength(1);
    expect(fns[0]![1].Properties.Environment.Variables.USAGE_KEYS_STAGE).toBe(stage.name);
    const [[, authorizer]] = resources(t(), 'AWS::ApiGateway::Authorizer');
    expect(authorizer!.Properties.AuthorizerResultTtlInSeconds).toBeLessThan(SPENT_KEYS.notInLastSeconds);
  });
});

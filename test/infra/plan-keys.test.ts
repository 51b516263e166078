/**
 * The plan API keys on both stages' templates. How API Gateway reads the template: with apiKeySourceType AUTHORIZER,
 * a request counts against the API key the authorizer names, and only once the authorizer has allowed it; a key
 * named on no usage plan of the stage is answered 403. So every value the authorizer can name must be an API key
 * the stack creates, on one usage plan of this API's stage; each plan has one, on its own usage plan.
 */
import { describe, expect, it } from 'vitest';
import { PLAN_NAMES, PLANS, planUsageKeyValue } from '../../contract/plans.ts';
import { generateKey, generateKeyId, hashKey, usableKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';
import { planKeyIds } from '../../lib/preflight/follow.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { resources, synthesizeStages, templates } from './stack-fixture.ts';

synthesizeStages();

describe.each(STAGE_NAMES)('stage %s', (stageName) => {
  const stage = STAGES[stageName];
  const t = () => templates[stageName];

  // The count and figures of the plans and keys are aws-rules.test.ts's; here, what keeps a key's callers off 403.
  it("puts each plan's key, enabled, on its plan's usage plan (3357b0c's logical id) on this API's stage", () => {
    const [[apiId]] = resources(t(), 'AWS::ApiGateway::RestApi');
    const ids = planKeyIds(t().toJSON() as CfnTemplate, stage.name);
    // What preflight's follow rule reads: a stack of this template can be followed by the next release.
    expect(ids.size).toBe(PLAN_NAMES.length);
    const all = t().toJSON().Resources as Record<string, { Properties: Record<string, any> }>;
    for (const [plan, keyId] of ids) {
      expect(all[keyId]!.Properties.Enabled, plan).toBe(true);
      const [[, attachment]] = resources(t(), 'AWS::ApiGateway::UsagePlanKey').filter(
        ([, a]) => a.Properties.KeyId.Ref === keyId,
      );
      // Kept from the last release (Free, Pro, Business): an update never replaces a plan's usage plan.
      const planId = attachment!.Properties.UsagePlanId.Ref;
      expect(planId).toBe(`UsagePlan${PLANS[plan].displayName}`);
      expect(all[planId]!.Properties.ApiStages).toEqual([
        expect.objectContaining({ ApiId: { Ref: apiId }, Stage: expect.anything() }),
      ]);
    }
  });

  it("the authorizer names, for any key of any plan, its plan's API key", () => {
    const values = new Map(
      resources(t(), 'AWS::ApiGateway::ApiKey').map(([, k]) => [k.Properties.Value as string, k.Properties.Name]),
    );
    for (const plan of PLAN_NAMES)
      for (let i = 0; i < 50; i++) {
        const record: KeyRecord = {
          hash: hashKey(generateKey()),
          keyId: generateKeyId(),
          owner: 'o',
          plan,
          status: 'active',
          createdAt: '2030-01-01T00:00:00.000Z',
          ...(plan === 'enterprise' ? { limits: { perMinute: 5_000, perDay: 1_000_000 } } : {}),
        };
        const named = usableKey(record, stage.name)!.usageIdentifierKey;
        expect(named, plan).toBe(planUsageKeyValue(stage.name, plan));
        expect(values.has(named), plan).toBe(true);
      }
  });

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
  });
});

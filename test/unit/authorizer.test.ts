/**
 * The authorizer's policy must allow the whole stage (API Gateway caches it per token for every route), what it
 * decides for a banned or spent key, and which API key it names for a key it lets through.
 */
import { describe, expect, it } from 'vitest';
import { SPENT_DENY_CUTOFF_SECONDS } from '../../contract/deny-context.ts';
import { PLAN_NAMES, planUsageKeyValue } from '../../contract/plans.ts';
import { usableKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { standingDecision } from '../../lambdas/domain/refusal.ts';
import { stageWildcard } from '../../lambdas/handlers/authorizer.ts';

describe('stageWildcard', () => {
  it('covers every method and path of the stage the call came through', () => {
    expect(stageWildcard('arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/pets/7')).toBe(
      'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/*',
    );
  });
});

describe('standingDecision: what the gateway does with a known key before its plan’s usage plan counts it', () => {
  const noon = Date.UTC(2033, 2, 4, 12, 0, 0) / 1000;
  const today = Date.UTC(2033, 2, 4) / 1000;
  const midnight = today + 86_400;

  it('denies a banned key until its ban ends, a spent day or not', () => {
    expect(standingDecision({ bannedUntil: noon + 1 }, noon)).toBe('banned');
    expect(standingDecision({ bannedUntil: noon + 1, spentDay: today }, noon)).toBe('banned');
    expect(standingDecision({ bannedUntil: noon + 1 }, noon + 1)).toBe('allow');
    expect(standingDecision({ bannedUntil: noon - 60 }, noon)).toBe('allow');
  });

  it('denies a key that spent today, until the last minutes of its day', () => {
    expect(standingDecision({ spentDay: today - 86_400 }, noon)).toBe('allow');
    expect(standingDecision({ spentDay: today }, noon)).toBe('spent');
    expect(standingDecision({ spentDay: today }, midnight - SPENT_DENY_CUTOFF_SECONDS - 1)).toBe('spent');
    // A Deny cached from here could outlive the day: the function refuses these, exactly.
    expect(standingDecision({ spentDay: today }, midnight - SPENT_DENY_CUTOFF_SECONDS)).toBe('allow');
    // A ban that ended leaves the spent day to decide.
    expect(standingDecision({ bannedUntil: noon - 60, spentDay: today }, noon)).toBe('spent');
  });

  it('allows what it cannot judge: no standing, or one it could not read (the function still limits it)', () => {
    expect(standingDecision({}, noon)).toBe('allow');
    expect(standingDecision(undefined, noon)).toBe('allow');
  });
});

describe('usableKey: the API key a usable key counts against', () => {
  const record = (plan: KeyRecord['plan'], limits?: KeyRecord['limits']): KeyRecord => ({
    hash: 'h',
    keyId: 'key_0123456789abcdef',
    owner: 'o',
    plan,
    ...(limits ? { limits } : {}),
    status: 'active',
    createdAt: '2033-03-04T00:00:00.000Z',
  });

  it("names its plan's API key on the stage, whatever the key, and a value API Gateway accepts", () => {
    for (const plan of PLAN_NAMES) {
      const limits = plan === 'enterprise' ? { perMinute: 1_200, perDay: 30_000 } : undefined;
      expect(usableKey(record(plan, limits), 'staging')!.usageIdentifierKey).toBe(planUsageKeyValue('staging', plan));
      for (const stage of ['staging', 'production', 'pr-42'])
        expect(planUsageKeyValue(stage, plan)).toMatch(/^[A-Za-z0-9]{30,128}$/);
    }
    const values = PLAN_NAMES.flatMap((p) => ['staging', 'production'].map((s) => planUsageKeyValue(s, p)));
    expect(new Set(values).size).toBe(values.length);
  });

  it('refuses a revoked key and an Enterprise key without agreed limits', () => {
    expect(usableKey({ ...record('pro'), status: 'revoked' }, 'staging')).toBeUndefined();
    expect(usableKey(record('enterprise'), 'staging')).toBeUndefined();
  });
});

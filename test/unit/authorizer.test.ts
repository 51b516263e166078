/**
 * The authorizer's policy must allow the whole stage (API Gateway caches it per token for every route), and what it
 * decides for a banned or spent key.
 */
import { describe, expect, it } from 'vitest';
import { SPENT_KEYS, spentKeyValue } from '../../contract/key-pool.ts';
import { gateDecision, gateUsageKey } from '../../lambdas/domain/keys.ts';
import { stageWildcard } from '../../lambdas/handlers/authorizer.ts';

describe('stageWildcard', () => {
  it('covers every method and path of the stage the call came through', () => {
    expect(stageWildcard('arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/GET/pets/7')).toBe(
      'arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/*',
    );
  });
});

describe('gateDecision: what the gateway does with a known key before any usage plan counts it', () => {
  const free = { keyId: 'k', plan: 'free' as const, perMinute: 60, perDay: 1_000 };
  const noon = Date.UTC(2033, 2, 4, 12, 0, 0) / 1000;
  const midnight = Date.UTC(2033, 2, 5) / 1000;

  it('denies a banned key, whatever its count', () => {
    expect(gateDecision(free, { bannedUntil: noon + 1, dayCount: 0 }, noon)).toBe('deny');
    expect(gateDecision(free, { bannedUntil: noon, dayCount: 0 }, noon)).toBe('count');
  });

  it('sends a key whose day is spent to the spent-keys plan, until the last minutes of its day', () => {
    expect(gateDecision(free, { dayCount: 999 }, noon)).toBe('count');
    expect(gateDecision(free, { dayCount: 1_000 }, noon)).toBe('spent');
    expect(gateDecision(free, { dayCount: 1_000 }, midnight - SPENT_KEYS.notInLastSeconds - 1)).toBe('spent');
    // A decision cached from here could outlive the day: the function refuses these, exactly.
    expect(gateDecision(free, { dayCount: 1_000 }, midnight - SPENT_KEYS.notInLastSeconds)).toBe('count');
  });

  it("counts what it cannot judge: an unread standing, a sharded key's shard 0", () => {
    expect(gateDecision(free, undefined, noon)).toBe('count');
    const big = { ...free, plan: 'enterprise' as const, perMinute: 600_000, perDay: 100_000_000 };
    expect(gateDecision(big, { dayCount: 100_000_000 }, noon)).toBe('count');
  });

  it('names the spent-keys API key of the stage for a spent key, else the key its requests count against', () => {
    const auth = { ...free, usageIdentifierKey: 'own' };
    expect(gateUsageKey(auth, 'spent', 'staging')).toBe(spentKeyValue('staging'));
    expect(gateUsageKey(auth, 'count', 'staging')).toBe('own');
    expect(spentKeyValue('staging')).toMatch(/^[A-Za-z0-9]{30,128}$/);
  });
});

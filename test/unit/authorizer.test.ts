/**
 * The authorizer's policy must allow the whole stage (API Gateway caches it per token for every route), and what it
 * decides for a banned or spent key.
 */
import { describe, expect, it } from 'vitest';
import { enterpriseBracket } from '../../contract/brackets.ts';
import {
  BRACKET_POOL,
  SPENT_KEYS,
  bracketPoolKeyValue,
  poolKeyValue,
  poolMemberOf,
  spentKeyValue,
} from '../../contract/key-pool.ts';
import {
  PAYING_PROBATION,
  PROBATION,
  payingProbationKeyValue,
  payingProbationShardOf,
  probationKeyValue,
  probationShardOf,
} from '../../contract/probation.ts';
import { gateDecision, gateUsageKey, usableKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
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
  const today = Date.UTC(2033, 2, 4) / 1000;
  const midnight = today + 86_400;

  it('denies a banned key until its ban ends', () => {
    expect(gateDecision({ bannedUntil: noon + 1 }, noon)).toBe('deny');
    expect(gateDecision({ bannedUntil: noon + 1, spentDay: today }, noon)).toBe('deny');
    expect(gateDecision({ bannedUntil: noon + 1 }, noon + 1)).not.toBe('deny');
  });

  it('sends a key that spent today to the spent-keys plan, until the last minutes of its day', () => {
    expect(gateDecision({ spentDay: today - 86_400 }, noon)).toBe('count');
    expect(gateDecision({ spentDay: today }, noon)).toBe('spent');
    expect(gateDecision({ spentDay: today }, midnight - SPENT_KEYS.notInLastSeconds - 1)).toBe('spent');
    // A decision cached from here could outlive the day: the function refuses these, exactly.
    expect(gateDecision({ spentDay: today }, midnight - SPENT_KEYS.notInLastSeconds)).toBe('count');
  });

  it('counts what it cannot judge: no standing, or one it could not read', () => {
    expect(gateDecision({}, noon)).toBe('count');
    expect(gateDecision(undefined, noon)).toBe('count');
  });

  it('names the spent-keys API key of the stage for a spent key, else the key its requests count against', () => {
    const auth = { ...free, usageIdentifierKey: 'own' };
    expect(gateUsageKey(auth, 'spent', 'staging')).toBe(spentKeyValue('staging'));
    expect(gateUsageKey(auth, 'count', 'staging')).toBe('own');
    expect(spentKeyValue('staging')).toMatch(/^[A-Za-z0-9]{30,128}$/);
  });

  it('puts a key whose ban ended within PROBATION.seconds on probation, a spent day still first', () => {
    expect(gateDecision({ bannedUntil: noon }, noon)).toBe('probation');
    expect(gateDecision({ bannedUntil: noon - PROBATION.seconds + 1 }, noon)).toBe('probation');
    expect(gateDecision({ bannedUntil: noon - PROBATION.seconds }, noon)).toBe('count');
    expect(gateDecision({ bannedUntil: noon - 60, spentDay: today }, noon)).toBe('spent');
  });

  it('counts a Free pool key on probation against the probation API key, a key with its own API key against it', () => {
    const pooled = { ...free, usageIdentifierKey: poolKeyValue('staging', poolMemberOf(free.keyId)) };
    expect(gateUsageKey(pooled, 'probation', 'staging')).toBe(
      probationKeyValue('staging', probationShardOf(free.keyId)),
    );
    expect(gateUsageKey({ ...free, usageIdentifierKey: 'own' }, 'probation', 'staging')).toBe('own');
    const shards = Array.from({ length: PROBATION.shards }, (_, n) => probationKeyValue('production', n));
    for (const v of shards) expect(v).toMatch(/^[A-Za-z0-9]{30,128}$/);
    expect(new Set(shards).size).toBe(PROBATION.shards);
    // Shard 0 keeps the single probation key's value: the deployed key stays where it is.
    expect(probationKeyValue('staging', 0)).toBe('animalstorefreepoolprobationstaging');
  });

  it("counts a paying or Enterprise key on probation against its own pool's probation key, never another plan's", () => {
    const record = (plan: KeyRecord['plan'], limits?: KeyRecord['limits']): KeyRecord => ({
      hash: 'h',
      keyId: 'key_0123456789abcdef',
      owner: 'o',
      plan,
      limits,
      status: 'active',
      createdAt: '2033-03-04T00:00:00.000Z',
    });
    for (const plan of ['pro', 'business'] as const) {
      const auth = usableKey(record(plan), 'staging')!;
      expect(gateUsageKey(auth, 'probation', 'staging')).toBe(
        payingProbationKeyValue('staging', plan, payingProbationShardOf(auth.keyId, plan)),
      );
      const shards = Array.from({ length: PAYING_PROBATION.shards }, (_, n) =>
        payingProbationKeyValue('prod', plan, n),
      );
      for (const v of shards) expect(v).toMatch(/^[A-Za-z0-9]{30,128}$/);
      expect(new Set(shards).size).toBe(PAYING_PROBATION.shards);
    }
    const limits = { perMinute: 1_200, perDay: 30_000 };
    const auth = usableKey(record('enterprise', limits), 'staging')!;
    // The bracket's member after those key ids map to: made with the bracket's pool by the admin tool.
    expect(gateUsageKey(auth, 'probation', 'staging')).toBe(
      bracketPoolKeyValue('staging', enterpriseBracket(limits).id, BRACKET_POOL.members),
    );
    expect(gateUsageKey(auth, 'count', 'staging')).toBe(auth.usageIdentifierKey);
  });
});

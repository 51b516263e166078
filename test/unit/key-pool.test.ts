/**
 * The mapping that lets a stage hold 1,000,000 customer keys under API Gateway's 10,000 API keys per account and
 * Region: paying keys keep an API key of their own, Free keys share the pool members their key ids map to.
 */
import { enterpriseBracket } from '../../contract/brackets.ts';
import {
  BRACKET_POOL,
  PAYING_POOLS,
  bracketPoolKeyValue,
  payingPoolKeyValue,
  isPoolMemberKey,
} from '../../contract/key-pool.ts';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  API_KEYS_PER_ACCOUNT_REGION,
  FREE_KEY_POOL,
  poolKeyValue,
  poolThrottle,
  poolMemberOf,
} from '../../contract/key-pool.ts';
import { ACCOUNT_THROTTLE, PLANS } from '../../contract/plans.ts';
import {
  API_KEY_VALUE_PATTERN,
  authenticate,
  generateKeyId,
  hashKey,
  usageIdentifierKey,
  usageKeyOf,
  type KeyRecord,
} from '../../lambdas/domain/keys.ts';

describe('poolMemberOf', () => {
  it('maps a key id to the same member every time, within the pool', () => {
    for (let i = 0; i < 1_000; i++) {
      const keyId = generateKeyId();
      const m = poolMemberOf(keyId);
      expect(Number.isInteger(m) && m >= 0 && m < FREE_KEY_POOL.members).toBe(true);
      expect(poolMemberOf(keyId)).toBe(m);
    }
    // Pinned: a key's member must never change across releases (cached authorizer results and the day's usage on
    // the gateway name it); changing the hash or the pool size moves every Free key at once.
    expect([
      poolMemberOf('key_0123456789abcdef'),
      poolMemberOf('key_0000000000000000'),
      poolMemberOf('dev_abcdef012345'),
    ]).toEqual([25, 9, 57]);
  });

  it('spreads keys evenly: 64,000 key ids (random and sequential) put 750 to 1,250 on each member', () => {
    for (const ids of [
      Array.from({ length: 64_000 }, () => generateKeyId()),
      Array.from({ length: 64_000 }, (_, i) => `key_${i.toString(16).padStart(16, '0')}`),
      Array.from({ length: 64_000 }, () => `dev_${randomUUID().slice(0, 12)}`),
    ]) {
      const counts = new Array<number>(FREE_KEY_POOL.members).fill(0);
      for (const id of ids) counts[poolMemberOf(id)]!++;
      const mean = ids.length / FREE_KEY_POOL.members;
      expect(Math.min(...counts)).toBeGreaterThanOrEqual(0.75 * mean);
      expect(Math.max(...counts)).toBeLessThanOrEqual(1.25 * mean);
    }
  });
});

describe('poolKeyValue', () => {
  it('gives every member of every stage a distinct value API Gateway accepts', () => {
    const values = ['local', 'staging', 'production'].flatMap((stage) =>
      Array.from({ length: FREE_KEY_POOL.members }, (_, m) => poolKeyValue(stage, m)),
    );
    expect(new Set(values).size).toBe(values.length);
    // API Gateway developer guide, "Usage plans and API keys": alphanumeric, 20 to 128 characters.
    for (const v of values) expect(v).toMatch(API_KEY_VALUE_PATTERN);
    expect(() => poolKeyValue('staging', FREE_KEY_POOL.members)).toThrow(/no pool member/);
  });
});

describe('usageKeyOf: which API key the authorizer names', () => {
  const record = (plan: KeyRecord['plan'], apiGatewayKeyId?: string) => ({
    keyId: 'key_0123456789abcdef',
    plan,
    ...(apiGatewayKeyId ? { apiGatewayKeyId } : {}),
  });

  it('a Free key: its pool member on the stage; a paying key, or a Free key that has its own API key: its own', () => {
    const member = poolMemberOf('key_0123456789abcdef');
    expect(usageKeyOf(record('free'), 'production')).toBe(poolKeyValue('production', member));
    expect(usageKeyOf(record('free'), 'staging')).toBe(poolKeyValue('staging', member));
    for (const plan of ['pro', 'business', 'enterprise'] as const)
      expect(usageKeyOf(record(plan, 'abc123'), 'production')).toBe(usageIdentifierKey('key_0123456789abcdef'));
    expect(usageKeyOf(record('free', 'abc123'), 'production')).toBe(usageIdentifierKey('key_0123456789abcdef'));
  });

  it("every paying key without an API key of its own: its plan's (or Enterprise bracket's) pool member", () => {
    const id = 'key_0123456789abcdef';
    for (const plan of ['pro', 'business'] as const) {
      const value = usageKeyOf(record(plan), 'staging');
      expect(value).toBe(payingPoolKeyValue('staging', plan, poolMemberOf(id, PAYING_POOLS[plan].members)));
      expect(value).toMatch(API_KEY_VALUE_PATTERN);
      // A flooding key on probation leaves its member: the probation key carries it, not its neighbours.
      expect(isPoolMemberKey(value)).toBe(true);
    }
    const limits = { perMinute: 600, perDay: 50_000 };
    const enterprise = usageKeyOf({ ...record('enterprise'), limits }, 'staging');
    expect(enterprise).toBe(
      bracketPoolKeyValue('staging', enterpriseBracket(limits).id, poolMemberOf(id, BRACKET_POOL.members)),
    );
    expect(enterprise).toMatch(API_KEY_VALUE_PATTERN);
    // An Enterprise key on probation leaves its bracket member too, for its bracket's probation member.
    expect(isPoolMemberKey(enterprise)).toBe(true);
  });

  it('is what authenticate returns for the bearer of the key', async () => {
    const key = `ask_${'0123456789abcdefghijklmnop'.padEnd(43, 'q')}`;
    const stored: KeyRecord = {
      hash: hashKey(key),
      keyId: 'key_00000000000000aa',
      owner: 'o',
      plan: 'free',
      status: 'active',
      createdAt: '2026-01-01T00:00:00.000Z',
    };
    const store = { getByHash: async (h: string) => (h === stored.hash ? stored : undefined) };
    const auth = await authenticate(store, `Bearer ${key}`, 'staging');
    expect(auth).toMatchObject({ keyId: stored.keyId, plan: 'free', perMinute: 60, perDay: 1_000 });
    expect(auth!.usageIdentifierKey).toBe(poolKeyValue('staging', poolMemberOf(stored.keyId)));
  });
});

describe('the pool and the ceiling', () => {
  it("gives every pool's usage plan the account's whole throttle, so no member refuses what the account admits", () => {
    for (const plan of ['free', 'pro', 'business'] as const) {
      const pool = poolThrottle(plan);
      expect(pool).toEqual({ rateLimit: 10_000, burstLimit: 5_000, quotaPerDay: 2 ** 31 - 1, guaranteed: true });
      expect(pool.burstLimit).toBeLessThanOrEqual(ACCOUNT_THROTTLE.burstLimit);
      expect(pool.rateLimit).toBeLessThanOrEqual(ACCOUNT_THROTTLE.rateLimit);
      // Every customer of a member spending its whole day, at 1,000,000 keys of the plan on one stage.
      const members = plan === 'free' ? FREE_KEY_POOL.members : 16;
      const asked = (1_000_000 / members) * PLANS[plan].limits!.perDay;
      expect(pool.quotaPerDay).toBeGreaterThanOrEqual(Math.min(asked, ACCOUNT_THROTTLE.rateLimit * 86_400));
    }
  });

  it('holds 1,000,000 customer keys on one stage with API keys to spare for paying customers', () => {
    const freeCustomers = 1_000_000;
    // The pool's members and the spent-keys key.
    const apiKeysUsedByFree = FREE_KEY_POOL.members + 1;
    expect(apiKeysUsedByFree).toBeLessThan(API_KEYS_PER_ACCOUNT_REGION / 100);
    // Two stages in one account and Region: 10,000 - 2 x 65 = 9,870 paying customers, any number of Free ones.
    expect(API_KEYS_PER_ACCOUNT_REGION - 2 * apiKeysUsedByFree).toBe(9_870);
    expect(freeCustomers / FREE_KEY_POOL.members).toBe(15_625);
  });
});

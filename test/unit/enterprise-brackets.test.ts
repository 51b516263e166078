/**
 * Enterprise keys share usage plans by bracket (lib/admin/brackets.ts): over the whole range of limits an admin can
 * set, the brackets stay few enough for both stages of an account to fit API Gateway's default 300 usage plans, and
 * each bracket's plan admits at least what the key's exact mapping admits (it never refuses what the limiter would
 * serve). Every customer of a bracket shares its four members, so the plan is a pool member's (MEMBER_PLAN): the id
 * alone carries the exact mapping's figures, rounded up.
 */
import { expect, it } from 'vitest';
import { MAX_CUSTOM_LIMITS, MEMBER_PLAN, usagePlanThrottle } from '../../contract/plans.ts';
import { ENTERPRISE_BRACKETS, enterpriseBracket, ladderUp } from '../../lib/admin/brackets.ts';

it('the ladder rounds up to 1, 3, 10, 30, …', () => {
  expect([1, 2, 3, 4, 10, 11, 31, 299, 300, 301].map(ladderUp)).toEqual([1, 3, 3, 10, 10, 30, 100, 300, 300, 1000]);
});

it('every Enterprise limit falls in one of at most ENTERPRISE_BRACKETS brackets, never stricter than its own mapping', () => {
  const seen = new Set<string>();
  for (let perMinute = 1; perMinute <= MAX_CUSTOM_LIMITS.perMinute; perMinute = Math.ceil(perMinute * 1.07)) {
    for (let perDay = perMinute; perDay <= MAX_CUSTOM_LIMITS.perDay; perDay = Math.ceil(perDay * 1.07)) {
      const exact = usagePlanThrottle({ perMinute, perDay });
      const b = enterpriseBracket({ perMinute, perDay });
      seen.add(b.id);
      expect(b.rateLimit).toBeGreaterThanOrEqual(exact.rateLimit);
      expect(b.burstLimit).toBeGreaterThanOrEqual(exact.burstLimit);
      expect(b.quotaPerDay).toBeGreaterThanOrEqual(exact.quotaPerDay);
      expect({ rateLimit: b.rateLimit, burstLimit: b.burstLimit, quotaPerDay: b.quotaPerDay }).toEqual({
        rateLimit: MEMBER_PLAN.rateLimit,
        burstLimit: MEMBER_PLAN.burstLimit,
        quotaPerDay: MEMBER_PLAN.quotaPerDay,
      });
    }
  }
  expect(seen.size).toBeLessThanOrEqual(ENTERPRISE_BRACKETS);
  // Both stages of one account, and the stacks' own plans (standard, Free pool, spent keys), within 300.
  expect(2 * ENTERPRISE_BRACKETS + 20).toBeLessThanOrEqual(300);
});

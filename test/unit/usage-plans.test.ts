/**
 * The local usage-plan enforcement on an injected clock, against API Gateway's documented model (Developer Guide,
 * "Throttle API requests" and "Usage plans"): a token bucket per API key (rate per second, burst = capacity, full at
 * first use), a quota per period where a plan has one, and only requests the plan admits are counted. An API key is
 * on the usage plan the template attaches it to; any other is on none (INVALID_API_KEY).
 */
import { describe, expect, it } from 'vitest';
import { UsagePlanEnforcer } from '../../lib/local/usage-plans.ts';
import type { UsagePlanDef } from '../../lib/local/template.ts';

const plan: UsagePlanDef = { id: 'UsagePlanFree', rateLimit: 2, burstLimit: 5, quota: { limit: 8, period: 'DAY' } };
const enforcer = () =>
  new UsagePlanEnforcer({
    usagePlans: new Map([[plan.id, plan]]),
    usagePlanKeys: new Map([
      ['k', plan.id],
      ['a', plan.id],
      ['b', plan.id],
    ]),
  });
const T0 = Date.UTC(2026, 0, 1, 23, 0, 0);

describe('usage plan enforcement', () => {
  it('admits a full burst at once, then one request per 1/rate seconds', () => {
    const e = enforcer();
    const verdicts = Array.from({ length: 6 }, () => e.admit('k', T0));
    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'THROTTLED']);
    expect(e.admit('k', T0 + 499)).toBe('THROTTLED');
    expect(e.admit('k', T0 + 500)).toBe('ok');
  });

  it('counts admitted requests only, and rejects past the quota until the UTC day ends', () => {
    const e = enforcer();
    let t = T0;
    for (let i = 0; i < 8; i++) expect(e.admit('k', (t += 1_000))).toBe('ok');
    expect(e.used('k')).toBe(8);
    expect(e.admit('k', t + 1_000)).toBe('QUOTA_EXCEEDED');
    expect(e.used('k'), 'a rejected request is not counted').toBe(8);
    expect(e.admit('k', Date.UTC(2026, 0, 2, 0, 0, 0))).toBe('ok');
    expect(e.used('k')).toBe(1);
  });

  it('gives each API key of a plan a bucket of its own, and refuses a key that is on no usage plan', () => {
    const e = enforcer();
    for (let i = 0; i < 5; i++) e.admit('a', T0);
    expect(e.admit('a', T0)).toBe('THROTTLED');
    expect(e.admit('b', T0)).toBe('ok');
    expect(e.admit(undefined, T0)).toBe('INVALID_API_KEY');
    expect(e.admit('c', T0), 'attached to no usage plan in this model').toBe('INVALID_API_KEY');
    expect(e.used('c')).toBe(0);
  });

  it('adds no tokens when the clock moves backwards', () => {
    const e = enforcer();
    for (let i = 0; i < 5; i++) e.admit('k', T0);
    expect(e.admit('k', T0 - 60_000)).toBe('THROTTLED');
    expect(e.admit('k', T0 - 59_500)).toBe('ok');
  });
});

/**
 * The local usage-plan enforcement on an injected clock, against API Gateway's documented model (Developer Guide,
 * "Throttle API requests" and "Usage plans"): a token bucket per key (rate per second, burst = capacity, full at
 * first use), a quota per period, and only requests the plan admits are counted.
 */
import { describe, expect, it } from 'vitest';
import { usagePlanThrottle } from '../../contract/plans.ts';
import { enterpriseBracket } from '../../lib/admin/brackets.ts';
import { UsagePlanEnforcer } from '../../lib/local/usage-plans.ts';
import type { UsagePlanDef } from '../../lib/local/template.ts';

const plan: UsagePlanDef = { id: 'FreePlan', rateLimit: 2, burstLimit: 5, quota: { limit: 8, period: 'DAY' } };
const enforcer = () =>
  new UsagePlanEnforcer({
    usagePlans: new Map([[plan.id, plan]]),
    usagePlanOutputs: new Map([['UsagePlanIdPro', plan.id]]),
  });
// A Pro key: a Free key's requests count against its pool member on the pool's plan (test/integration/pool-plan.test.ts).
const free = { plan: 'pro' };
const T0 = Date.UTC(2026, 0, 1, 23, 0, 0);

describe('usage plan enforcement', () => {
  it('admits a full burst at once, then one request per 1/rate seconds', () => {
    const e = enforcer();
    const verdicts = Array.from({ length: 6 }, () => e.admit('k', free, T0));
    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'THROTTLED']);
    expect(e.admit('k', free, T0 + 499)).toBe('THROTTLED');
    expect(e.admit('k', free, T0 + 500)).toBe('ok');
  });

  it('counts admitted requests only, and rejects past the quota until the UTC day ends', () => {
    const e = enforcer();
    let t = T0;
    for (let i = 0; i < 8; i++) expect(e.admit('k', free, (t += 1_000))).toBe('ok');
    expect(e.used('k', free)).toBe(8);
    expect(e.admit('k', free, t + 1_000)).toBe('QUOTA_EXCEEDED');
    expect(e.used('k', free), 'a rejected request is not counted').toBe(8);
    expect(e.admit('k', free, Date.UTC(2026, 0, 2, 0, 0, 0))).toBe('ok');
    expect(e.used('k', free)).toBe(1);
  });

  it('keeps keys apart, and refuses a key that is on no usage plan', () => {
    const e = enforcer();
    for (let i = 0; i < 5; i++) e.admit('a', free, T0);
    expect(e.admit('a', free, T0)).toBe('THROTTLED');
    expect(e.admit('b', free, T0)).toBe('ok');
    expect(e.admit(undefined, free, T0)).toBe('INVALID_API_KEY');
    expect(e.admit('c', { plan: 'business' }, T0), 'no UsagePlanIdBusiness output in this model').toBe(
      'INVALID_API_KEY',
    );
  });

  it("puts an Enterprise key on its bracket's shared plan, as the admin tool does, with a bucket of its own", () => {
    const e = enforcer();
    const enterprise = { plan: 'enterprise', perMinute: 120, perDay: 1_000 };
    const { burstLimit } = enterpriseBracket(enterprise);
    // Never stricter than the exact mapping the limits give.
    expect(burstLimit).toBeGreaterThanOrEqual(usagePlanThrottle(enterprise).burstLimit);
    const burst = Array.from({ length: burstLimit + 1 }, () => e.admit('x', enterprise, T0));
    expect(burst.filter((v) => v === 'ok')).toHaveLength(burstLimit);
    expect(burst.at(-1)).toBe('THROTTLED');
    // Another key of the same bracket shares the plan, not the bucket.
    expect(e.admit('y', enterprise, T0)).toBe('ok');
  });

  it('adds no tokens when the clock moves backwards', () => {
    const e = enforcer();
    for (let i = 0; i < 5; i++) e.admit('k', free, T0);
    expect(e.admit('k', free, T0 - 60_000)).toBe('THROTTLED');
    expect(e.admit('k', free, T0 - 59_500)).toBe('ok');
  });
});

/**
 * Locally, as deployed: a key's requests count against its pool member on its plan's pool usage plan from the
 * template (Free, Pro, Business: the stack's pools, a bucket and a day quota sized for several customers of the plan;
 * Enterprise: its bracket's plan), not against a plan of its own; and on probation, against a probation key on that
 * same plan, so a key that keeps to its limits after its ban is never refused by the gateway before the limiter.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { enterpriseBracket } from '../../contract/brackets.ts';
import { FREE_KEY_POOL, PAYING_POOLS, poolThrottle, poolValueOf } from '../../contract/key-pool.ts';
import { probationValueOf } from '../../contract/probation.ts';
import { localAssembly } from '../../lib/local/synth.ts';
import { apiModel, type ApiModel } from '../../lib/local/template.ts';
import { POOL_PLAN_ID, UsagePlanEnforcer } from '../../lib/local/usage-plans.ts';
import { payingPoolPlanLogicalId } from '../../lib/constructs/usage-plan-ids.ts';
import { EVERY_PLAN, callerOf, pairOf, type PlanCase } from '../helpers/plan-keys.ts';

let model: ApiModel;
let stage: string;
beforeAll(async () => {
  model = apiModel((await localAssembly()).template);
  stage = String([...model.functions.values()].map((f) => f.environment.USAGE_KEYS_STAGE).find(Boolean));
}, 240_000);

/** The usage plan a plan's pool members are on, as the stack (or the admin tool, for a bracket) makes it. */
function expectedPlan(c: PlanCase) {
  if (c.plan === 'enterprise') {
    const b = enterpriseBracket(c.limits);
    return { id: `enterprise-${b.id}`, rateLimit: b.rateLimit, burstLimit: b.burstLimit, quota: b.quotaPerDay };
  }
  const t = poolThrottle(c.plan);
  const id = c.plan === 'free' ? POOL_PLAN_ID : payingPoolPlanLogicalId(PAYING_POOLS[c.plan].logicalPrefix);
  return { id, rateLimit: t.rateLimit, burstLimit: t.burstLimit, quota: t.quotaPerDay };
}

describe.each(EVERY_PLAN)('a $name key', (c) => {
  it("counts on its pool member on its plan's pool plan, and on probation on a probation key of that plan", () => {
    const usage = new UsagePlanEnforcer(model);
    const { a: k } = pairOf(c, 'member');
    const want = expectedPlan(c);
    for (const value of [poolValueOf(k, stage), probationValueOf(k, stage)]) {
      const plan = usage.planFor(value, callerOf(k));
      expect(plan, value).toMatchObject({
        id: want.id,
        rateLimit: want.rateLimit,
        burstLimit: want.burstLimit,
        quota: { limit: want.quota },
      });
    }
    // The member's bucket, sized for several customers of the plan (or the bracket's), empties only after it.
    const member = poolValueOf(k, stage);
    for (let i = 0; i < want.burstLimit; i++) expect(usage.admit(member, callerOf(k), 0)).toBe('ok');
    expect(usage.admit(member, callerOf(k), 0)).toBe('THROTTLED');
  });

  it('on probation, sends its whole day at its limits without a refusal from the gateway', () => {
    const usage = new UsagePlanEnforcer(model);
    const { a: k } = pairOf(c, 'member');
    const probation = probationValueOf(k, stage);
    // A whole minute at each minute's start, until the day's quota: what the limiter admits from it.
    const dayStart = Date.UTC(2035, 0, 2);
    const verdicts = new Map<string, number>();
    for (let sent = 0, minute = 0; sent < k.limits.perDay; minute++)
      for (let i = 0; i < k.limits.perMinute && sent < k.limits.perDay; i++, sent++) {
        const v = usage.admit(probation, callerOf(k), dayStart + minute * 60_000 + i);
        verdicts.set(v, (verdicts.get(v) ?? 0) + 1);
      }
    expect(Object.fromEntries(verdicts)).toEqual({ ok: k.limits.perDay });
  });
});

it('has pools of more than one member', () => {
  expect(FREE_KEY_POOL.members).toBeGreaterThan(1);
  for (const pool of Object.values(PAYING_POOLS)) expect(pool.members).toBeGreaterThan(1);
});

/**
 * The usage plans of the template, enforced per API key as API Gateway does: a token bucket (rate per second,
 * burst = capacity, full at first use) and a quota per UTC day. API Gateway counts every request that gets past
 * the authorizer and the plan's checks, whatever the function answers (its own 429s and 503s included); a
 * request the bucket or the quota rejects is not counted.
 *
 * Keys join plans the way they are attached in AWS: an API key of the template to the plan the template puts it on
 * (the spent-keys key, the Free, Pro and Business pools' members and probation keys), a Free key's pool member to
 * the pool's usage plan (the stack's), another standard plan's key of its own (made before pools) to the usage plan
 * named by the stack output `UsagePlanId<Plan>`, an Enterprise key's bracket pool member (its probation member
 * included) to its bracket's shared plan (lib/admin/brackets.ts), as the admin tool does.
 */
import { PLANS, type PlanName } from '../../contract/plans.ts';
import { enterpriseBracket } from '../admin/brackets.ts';
import { usagePlanOutputId } from '../stacks/outputs.ts';
import { POOL_PLAN_LOGICAL_ID } from '../constructs/usage-plan-ids.ts';
import type { ApiModel, UsagePlanDef } from './template.ts';

/** The pool's usage plan, under the logical id the stack pins for it (lib/constructs/usage-plans.ts). */
export const POOL_PLAN_ID = POOL_PLAN_LOGICAL_ID;

export type UsageVerdict = 'ok' | 'THROTTLED' | 'QUOTA_EXCEEDED' | 'INVALID_API_KEY';

/** What the authorizer said about the caller (its context), enough to find the key's usage plan. */
export interface KeyPlan {
  readonly plan?: string;
  readonly perMinute?: number;
  readonly perDay?: number;
}

interface KeyState {
  tokens: number;
  refilledAt: number;
  period: number;
  used: number;
}

const DAY_MS = 86_400_000;

function periodOf(plan: UsagePlanDef, ms: number): number {
  // WEEK and MONTH quotas are counted per day here: the template uses DAY only.
  if (plan.quota && plan.quota.period !== 'DAY') throw new Error(`usage plan ${plan.id}: only DAY quotas are emulated`);
  return Math.floor(ms / DAY_MS);
}

export class UsagePlanEnforcer {
  private readonly state = new Map<string, KeyState>();
  private readonly enterprisePlans = new Map<string, UsagePlanDef>();

  private readonly model: Pick<ApiModel, 'usagePlans' | 'usagePlanOutputs' | 'usagePlanKeys'>;

  constructor(model: Pick<ApiModel, 'usagePlans' | 'usagePlanOutputs' | 'usagePlanKeys'>) {
    this.model = model;
  }

  /** The usage plan an API key (the authorizer's usageIdentifierKey) belongs to, if any. */
  planFor(apiKey: string, caller: KeyPlan): UsagePlanDef | undefined {
    // An API key the template itself puts on a plan (the spent-keys key, a pool member) is on that plan, whoever
    // the caller is.
    const own = this.model.usagePlanKeys?.get(apiKey);
    if (own) return this.model.usagePlans.get(own);
    const name = caller.plan as PlanName | undefined;
    if (!name || !PLANS[name]) return undefined;
    if (name === 'enterprise') {
      if (!caller.perMinute || !caller.perDay) return undefined;
      // The bracket's shared plan, as the admin tool puts an Enterprise key on in AWS (lib/admin/brackets.ts): its
      // figures apply to each API key on it. Built once per bracket, not on every request.
      const bracket = enterpriseBracket({ perMinute: caller.perMinute, perDay: caller.perDay });
      let plan = this.enterprisePlans.get(bracket.id);
      if (!plan) {
        plan = {
          id: `enterprise-${bracket.id}`,
          rateLimit: bracket.rateLimit,
          burstLimit: bracket.burstLimit,
          quota: { limit: bracket.quotaPerDay, period: 'DAY' },
        };
        this.enterprisePlans.set(bracket.id, plan);
      }
      return plan;
    }
    // A pooled plan's key is a pool member's API key, on the pool's usage plan in the template (one bucket and quota
    // per member, shared by every customer mapped to it), as in AWS: not on a single customer's plan.
    if (name === 'free') return this.model.usagePlans.get(POOL_PLAN_ID);
    const id = this.model.usagePlanOutputs.get(usagePlanOutputId(name));
    return id ? this.model.usagePlans.get(id) : undefined;
  }

  /** Admits (and counts) one request of `apiKey` at time `ms`, or names the gateway response that rejects it. */
  admit(apiKey: string | undefined, caller: KeyPlan, ms: number): UsageVerdict {
    if (!apiKey) return 'INVALID_API_KEY';
    const plan = this.planFor(apiKey, caller);
    if (!plan) return 'INVALID_API_KEY';
    const stateKey = `${plan.id}\u0000${apiKey}`;
    const s = this.state.get(stateKey) ?? {
      tokens: plan.burstLimit ?? Infinity,
      refilledAt: ms,
      period: periodOf(plan, ms),
      used: 0,
    };
    this.state.set(stateKey, s);
    this.refill(s, plan, ms);
    if (s.tokens < 1) return 'THROTTLED';
    if (s.period !== periodOf(plan, ms)) {
      s.period = periodOf(plan, ms);
      s.used = 0;
    }
    if (plan.quota && s.used >= plan.quota.limit) return 'QUOTA_EXCEEDED';
    s.tokens -= 1;
    s.used += 1;
    return 'ok';
  }

  /** Requests counted against the key's quota in the current period (what `get-usage` would report). */
  used(apiKey: string, caller: KeyPlan): number {
    const plan = this.planFor(apiKey, caller);
    return plan ? (this.state.get(`${plan.id}\u0000${apiKey}`)?.used ?? 0) : 0;
  }

  /** Requests counted against all keys' quotas in their current periods. */
  total(): number {
    return [...this.state.values()].reduce((n, s) => n + s.used, 0);
  }

  private refill(s: KeyState, plan: UsagePlanDef, ms: number): void {
    if (plan.rateLimit === undefined || plan.burstLimit === undefined) return;
    // A clock moved backwards (tests move it) adds nothing.
    const elapsed = Math.max(0, ms - s.refilledAt) / 1000;
    s.tokens = Math.min(plan.burstLimit, s.tokens + elapsed * plan.rateLimit);
    s.refilledAt = ms;
  }
}

/**
 * The usage plans of the template, enforced per API key as API Gateway does: a token bucket (rate per second,
 * burst = capacity, full at first use) and, where a plan has one, a quota per UTC day. API Gateway counts every
 * request that gets past the authorizer and the plan's checks, whatever the function answers (its own 429s and 503s
 * included); a request the bucket or the quota rejects is not counted. An API key is on the plan the template
 * attaches it to (each plan's one key); any other key is on no plan (INVALID_API_KEY: 403), as in AWS.
 */
import type { ApiModel, UsagePlanDef } from './template.ts';

export type UsageVerdict = 'ok' | 'THROTTLED' | 'QUOTA_EXCEEDED' | 'INVALID_API_KEY';

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
  private readonly model: Pick<ApiModel, 'usagePlans' | 'usagePlanKeys'>;

  constructor(model: Pick<ApiModel, 'usagePlans' | 'usagePlanKeys'>) {
    this.model = model;
  }

  /** The usage plan an API key (the authorizer's usageIdentifierKey) is on, if any. */
  planFor(apiKey: string): UsagePlanDef | undefined {
    const id = this.model.usagePlanKeys?.get(apiKey);
    return id ? this.model.usagePlans.get(id) : undefined;
  }

  /** Admits (and counts) one request of `apiKey` at time `ms`, or names the gateway response that rejects it. */
  admit(apiKey: string | undefined, ms: number): UsageVerdict {
    if (!apiKey) return 'INVALID_API_KEY';
    const plan = this.planFor(apiKey);
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
  used(apiKey: string): number {
    const plan = this.planFor(apiKey);
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

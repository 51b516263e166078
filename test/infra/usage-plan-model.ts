/**
 * A model of API Gateway's usage-plan enforcement in front of the app limiter, on a simulated clock, to check the
 * usage-plan mapping of contract/plans.ts against what API Gateway documents:
 * - throttling is a token bucket ("Throttle requests to your REST APIs": rate = tokens added per second, burst =
 *   bucket size, one token per request); a key's bucket starts full;
 * - the quota counts every request that passes the authorizer, whatever the function answers (its 429s, bans and
 *   503s included), per DAY period; AWS does not document where a DAY starts, so the model takes any offset; the
 *   model also counts requests the bucket throttled (the stricter reading for the property below).
 * The app side is the real limiter rules (lambdas/domain/rate-limit.ts `enforce`, headers and 429s) on an
 * in-memory store with the semantics of lambdas/storage/limit-store.ts (test/integration/limits.test.ts checks
 * those on DynamoDB Local): count in both windows when both have room and the key is not banned; a rejection
 * arriving more than BAN_POLICY.graceMs after the window's first 429 counts towards the ban, and reaching
 * banThreshold in a minute bans the key (the domain's own rejectionStep and shouldBan decide).
 */
import { BAN_POLICY, type PlanLimits, type UsagePlanLimits } from '../../contract/plans.ts';
import {
  enforce,
  rejectionStep,
  shouldBan,
  windowsAt,
  type Consumption,
  type LimitStore,
  type RateLimitHeaders,
  type Windows,
} from '../../lambdas/domain/rate-limit.ts';
import { AppError } from '../../lambdas/domain/errors.ts';

type Counters = { ms: number; m: number; d: number; rjm?: number; rf?: number; rj: number };

/** One key's limiter state, as limit-store.ts keeps it (one item per UTC day, a ban that outlives the day). */
export class MemoryLimitStore implements LimitStore {
  private days = new Map<number, Counters>();
  private banUntil = 0;

  private day(w: Windows): Counters {
    let c = this.days.get(w.dayStart);
    if (!c) this.days.set(w.dayStart, (c = { ms: -1, m: 0, d: 0, rj: 0 }));
    if (c.ms !== w.minuteStart) Object.assign(c, { ms: w.minuteStart, m: 0 });
    return c;
  }

  /** Whether consume() would admit now, without counting: what the app would have answered. */
  wouldAdmit(limits: PlanLimits, w: Windows): boolean {
    const c = this.day(w);
    return this.banUntil <= w.nowSec && c.m < limits.perMinute && c.d < limits.perDay;
  }

  async consume(_subject: string, limits: PlanLimits, w: Windows): Promise<Consumption> {
    const c = this.day(w);
    if (this.banUntil > w.nowSec) return { allowed: false, reason: 'banned', banUntil: this.banUntil };
    if (c.d < limits.perDay && c.m < limits.perMinute) {
      c.m++;
      c.d++;
      return { allowed: true, minuteCount: c.m, dayCount: c.d };
    }
    const step = rejectionStep(c, w);
    if (step.kind === 'open') Object.assign(c, { rjm: w.minuteStart, rf: w.nowMs, rj: 0 });
    if (step.kind === 'late' && shouldBan(++c.rj, limits)) this.banUntil = w.nowSec + BAN_POLICY.banSeconds;
    return { allowed: false, reason: c.d >= limits.perDay ? 'day' : 'minute', minuteCount: c.m, dayCount: c.d };
  }

  async usage(): Promise<never> {
    throw new Error('not modelled');
  }
}

export type Outcome =
  | { readonly by: 'gateway'; readonly type: 'THROTTLED' | 'QUOTA_EXCEEDED'; readonly appWouldAdmit: boolean }
  | { readonly by: 'app'; readonly status: 200 | 429; readonly headers: RateLimitHeaders };

/** API Gateway's usage plan (token bucket and DAY quota) in front of the app limiter, for one key. */
export class GatewayModel {
  private tokens: number;
  private lastMs = 0;
  private quotaDay = Number.NaN;
  private quotaUsed = 0;
  readonly app = new MemoryLimitStore();
  /** Requests that reached the function, per gateway quota day. */
  readonly reachedPerQuotaDay = new Map<number, number>();
  /** Requests the gateway rejected although the app would have admitted them. */
  readonly wronglyRejected: { atMs: number; type: string }[] = [];
  gatewayRejections = 0;

  readonly plan: UsagePlanLimits;
  readonly limits: PlanLimits;
  /** Where the gateway's quota day starts, in seconds after 00:00 UTC. */
  readonly quotaDayOffsetSec: number;

  constructor(plan: UsagePlanLimits, limits: PlanLimits, quotaDayOffsetSec = 0) {
    this.plan = plan;
    this.limits = limits;
    this.quotaDayOffsetSec = quotaDayOffsetSec;
    this.tokens = plan.burstLimit;
  }

  async request(atMs: number): Promise<Outcome> {
    if (atMs < this.lastMs) throw new Error('time runs forward');
    this.tokens = Math.min(this.plan.burstLimit, this.tokens + ((atMs - this.lastMs) / 1000) * this.plan.rateLimit);
    this.lastMs = atMs;
    const day = Math.floor((atMs / 1000 - this.quotaDayOffsetSec) / 86_400);
    if (day !== this.quotaDay) Object.assign(this, { quotaDay: day, quotaUsed: 0 });
    const w = windowsAt(atMs);
    let rejected: 'THROTTLED' | 'QUOTA_EXCEEDED' | undefined;
    if (this.quotaUsed >= this.plan.quotaPerDay) rejected = 'QUOTA_EXCEEDED';
    else if (this.tokens < 1) rejected = 'THROTTLED';
    this.quotaUsed++;
    if (rejected) {
      this.gatewayRejections++;
      const appWouldAdmit = this.app.wouldAdmit(this.limits, w);
      if (appWouldAdmit) this.wronglyRejected.push({ atMs, type: rejected });
      return { by: 'gateway', type: rejected, appWouldAdmit };
    }
    this.tokens -= 1;
    this.reachedPerQuotaDay.set(day, (this.reachedPerQuotaDay.get(day) ?? 0) + 1);
    try {
      return { by: 'app', status: 200, headers: await enforce(this.app, 'key', this.limits, w) };
    } catch (err) {
      if (err instanceof AppError && err.status === 429)
        return { by: 'app', status: 429, headers: err.headers as unknown as RateLimitHeaders };
      throw err;
    }
  }
}

/** How long a client that honours the headers waits after a response: until this time (ms), or not at all. */
export function honouredUntil(o: Outcome, atMs: number, prefer: 'reset' | 'retry-after'): number {
  // A gateway rejection carries static headers (contract/gateway-responses.ts): only Retry-After means anything.
  if (o.by === 'gateway') return atMs + (o.type === 'THROTTLED' ? 1 : 3_600) * 1000;
  const h = o.headers;
  const reset = Number(h['X-RateLimit-Reset']) * 1000;
  if (o.status === 429) return prefer === 'reset' ? reset : atMs + Number(h['Retry-After']) * 1000;
  return h['X-RateLimit-Remaining'] === '0' ? reset : 0;
}

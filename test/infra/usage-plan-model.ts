/**
 * A model of API Gateway's usage-plan enforcement in front of the app limiter, on a simulated clock, to check a usage
 * plan's figures (the template's) against what API Gateway documents:
 * - throttling is a token bucket ("Throttle requests to your REST APIs": rate = tokens added per second, burst =
 *   bucket size, one token per request); a key's bucket starts full;
 * - a quota, where the plan has one, counts every request that passes the authorizer, whatever the function answers
 *   (its 429s, bans and 503s included), per DAY period; AWS does not document where a DAY starts, so the model takes
 *   any offset; the model also counts requests the bucket throttled (the stricter reading for the property below).
 * The app side is the real limiter (lambdas/domain/rate-limit.ts `createLimiter` and `enforce`: leases, headers,
 * 429s and the ban) on in-memory counters with the semantics of lambdas/storage/limit-store.ts (the domain's own
 * takeStep decides each write; test/integration/limits.test.ts checks the real adapter on DynamoDB Local).
 */
import type { PlanLimits } from '../../contract/plans.ts';
import { enforce, windowsAt, type RateLimitHeaders } from '../../lambdas/domain/rate-limit.ts';
import { createLimiter } from '../../lambdas/domain/limiter.ts';
import { AppError } from '../../lambdas/domain/errors.ts';
import { MemoryCounters } from '../helpers/memory-counters.ts';

/** A usage plan's figures: its token bucket, and its day quota if it has one. */
export interface UsagePlanFigures {
  readonly rateLimit: number;
  readonly burstLimit: number;
  readonly quotaPerDay?: number;
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
  readonly counters = new MemoryCounters();
  readonly app = createLimiter(this.counters);
  /** Requests that reached the function, per gateway quota day. */
  readonly reachedPerQuotaDay = new Map<number, number>();
  /** Requests the gateway rejected although the app would have admitted them. */
  readonly wronglyRejected: { atMs: number; type: string }[] = [];
  gatewayRejections = 0;

  readonly plan: UsagePlanFigures;
  readonly limits: PlanLimits;
  /** Where the gateway's quota day starts, in seconds after 00:00 UTC. */
  readonly quotaDayOffsetSec: number;

  constructor(plan: UsagePlanFigures, limits: PlanLimits, quotaDayOffsetSec = 0) {
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
    if (this.plan.quotaPerDay !== undefined && this.quotaUsed >= this.plan.quotaPerDay) rejected = 'QUOTA_EXCEEDED';
    else if (this.tokens < 1) rejected = 'THROTTLED';
    this.quotaUsed++;
    if (rejected) {
      this.gatewayRejections++;
      const appWouldAdmit = this.counters.wouldAdmit('key', this.limits, w);
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

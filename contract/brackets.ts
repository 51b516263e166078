/**
 * Enterprise keys share usage plans by bracket, as the other plans share pools: API Gateway allows 300 usage plans
 * per account and Region by default, so one plan per Enterprise customer stops near 290 customers (both stages of an
 * account count). A usage plan's throttle and quota apply to each API key on it, so keys whose gateway limits are the
 * same can share one. The gateway's limits are only the backstop (the functions' limiter is exact), so each of the
 * exact mapping's figures (usagePlanThrottle: rate, burst, DAY quota) is rounded UP to a ladder of 1, 3, 10, 30, …:
 * the backstop never refuses what the exact mapping admits, and is at most 3.3 times looser. The whole range of
 * Enterprise limits falls in at most ENTERPRISE_BRACKETS brackets per stage (test/unit/enterprise-brackets.test.ts
 * counts them), so any number of Enterprise customers fits in the default quota.
 *
 * Here (not in the admin tool) because the authorizer names a bracket's pool member too (key-pool.ts).
 */
import { ACCOUNT_THROTTLE, MEMBER_PLAN, usagePlanThrottle, type PlanLimits, type UsagePlanLimits } from './plans.ts';

/** API Gateway's largest quota limit (an int32), which usagePlanThrottle caps at too. */
const MAX_QUOTA = 2 ** 31 - 1;

/** The most brackets the whole range of Enterprise limits can use, per stage (counted by the test). */
export const ENTERPRISE_BRACKETS = 80;

/** The smallest of 1, 3, 10, 30, 100, … that is at least `x`. */
export function ladderUp(x: number): number {
  for (let v = 1; ; v *= 10) {
    if (v >= x) return v;
    if (3 * v >= x) return 3 * v;
  }
}

export interface Bracket extends UsagePlanLimits {
  /** Names the bracket's usage plan: `r<rate>-b<burst>-q<quota>`. */
  readonly id: string;
}

/**
 * The bracket of an Enterprise key's limits: its id (the exact mapping's figures on the ladder, which name the
 * bracket's usage plan and pool members, so a key's pool never moves), and the figures its shared usage plan has:
 * a pool member's (MEMBER_PLAN), because every Enterprise customer of the bracket shares its four members, and a
 * member sized for one customer refused the eleventh customer of a 100-a-day bracket on its first request of the day.
 */
export function enterpriseBracket(limits: PlanLimits): Bracket {
  const t = usagePlanThrottle(limits);
  const rateLimit = Math.min(ladderUp(t.rateLimit), ACCOUNT_THROTTLE.rateLimit);
  const burstLimit = Math.min(ladderUp(t.burstLimit), ACCOUNT_THROTTLE.burstLimit);
  const quotaPerDay = Math.min(ladderUp(t.quotaPerDay), MAX_QUOTA);
  return { ...MEMBER_PLAN, guaranteed: t.guaranteed, id: `r${rateLimit}-b${burstLimit}-q${quotaPerDay}` };
}

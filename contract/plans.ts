/**
 * The plans table: the single source for the app limiter, the CDK usage plans and the docs.
 * Plain data, no CDK imports, so Lambda bundles can import it.
 */
export const PLAN_NAMES = ['free', 'pro', 'business', 'enterprise'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface PlanLimits {
  /** Requests per minute (a fixed window aligned to the UTC minute). */
  readonly perMinute: number;
  /** Requests per day (a fixed window aligned to the UTC day). */
  readonly perDay: number;
}

export interface Plan {
  readonly name: PlanName;
  readonly displayName: string;
  /** Limits, or undefined for plans whose limits are agreed per customer (Enterprise). */
  readonly limits?: PlanLimits;
}

export const PLANS: Readonly<Record<PlanName, Plan>> = {
  free: { name: 'free', displayName: 'Free', limits: { perMinute: 60, perDay: 1_000 } },
  pro: { name: 'pro', displayName: 'Pro', limits: { perMinute: 300, perDay: 10_000 } },
  business: { name: 'business', displayName: 'Business', limits: { perMinute: 1_000, perDay: 100_000 } },
  enterprise: { name: 'enterprise', displayName: 'Enterprise' },
};

/** Plans whose limits are fixed, and so get a shared usage plan per stage. */
export const STANDARD_PLANS = PLAN_NAMES.filter((p) => PLANS[p].limits !== undefined);

/** Upper bounds an admin may set for an Enterprise key. */
export const MAX_CUSTOM_LIMITS: PlanLimits = { perMinute: 1_000_000, perDay: 1_000_000_000 };

/**
 * The temporary ban of spec section 8.3: it follows requests that keep coming after the client was told 429.
 * A rejection counts towards the ban only when it arrives more than `graceMs` after the key's first 429 of that
 * minute window (a parallel burst that overshoots arrives within the grace and bans nothing). `banThreshold`
 * such late rejections within one minute window ban the key for `banSeconds`: every request then gets 429
 * `key_banned` with Retry-After until the ban ends. A client that honours Retry-After never gets near it.
 */
export const BAN_POLICY = { graceMs: 1_000, minRejections: 30, rejectionShare: 0.1, banSeconds: 15 * 60 } as const;

/** Late rejections in one minute window that ban a key: 10 % of its per-minute limit, at least 30. */
export function banThreshold(limits: PlanLimits): number {
  return Math.max(BAN_POLICY.minRejections, Math.ceil(limits.perMinute * BAN_POLICY.rejectionShare));
}

/**
 * API Gateway's default account-level throttle per Region ("Amazon API Gateway quotas": 10,000 requests per
 * second with a token bucket of 5,000; 2,500 and 1,250 in some newer Regions). A usage plan's per-client limits
 * cannot be higher than the account's, and every key of the account shares the account bucket.
 */
export const ACCOUNT_THROTTLE = { rateLimit: 10_000, burstLimit: 5_000 } as const;

/** API Gateway's quota limit is an Integer (32-bit). */
const MAX_QUOTA = 2 ** 31 - 1;

/**
 * The most 429s a client that honours the headers gets from one window: the requests it already had in flight when
 * the first 429 arrived (afterwards it waits for the reset). It keeps fewer than the smallest ban threshold in
 * flight (and those arrive within the ban's grace anyway), so by the app's own rule it is never abusive: that bound
 * is the allowance.
 */
export const HONOURING_REJECTIONS_PER_WINDOW = BAN_POLICY.minRejections - 1;

export interface UsagePlanLimits {
  /** Token bucket refill, requests per second. */
  readonly rateLimit: number;
  /** Token bucket size. */
  readonly burstLimit: number;
  /** Requests per quota period DAY. */
  readonly quotaPerDay: number;
  /** False when ACCOUNT_THROTTLE capped the bucket: then the gateway may reject what the app admits. */
  readonly guaranteed: boolean;
}

/**
 * How a plan maps onto an API Gateway usage plan, so that the gateway never rejects a request the app admits from a
 * client that honours X-RateLimit-Remaining/Reset and Retry-After, while a runaway client is still stopped
 * (docs/deployment.md, "Limits → usage plans", gives the reasoning; test/infra/usage-plans.test.ts checks it on a
 * model of API Gateway). API Gateway counts every request that passes the authorizer, the app's own 429s included,
 * so with W = perMinute + HONOURING_REJECTIONS_PER_WINDOW (what one minute window may see from such a client):
 * - burst = 2 W: the app admits a whole minute's budget at the end of one window and another right after the
 *   boundary, so a bucket must absorb two windows at once;
 * - rate = ceil(W / 60): any interval of T seconds meets at most floor(T / 60) + 2 windows, which the bucket
 *   admits because 2 W + (W / 60) T covers W (floor(T / 60) + 2);
 * - quota per DAY = what such a client can send in any 24 hours, whatever the gateway's day alignment (AWS does not
 *   document it): two UTC days of admitted requests, plus a batch of 429s for each window it used up (at most
 *   2 perDay / perMinute minutes, and 1,441 minute windows) and for each day it used up (2).
 */
export function usagePlanThrottle(limits: PlanLimits): UsagePlanLimits {
  const r = HONOURING_REJECTIONS_PER_WINDOW;
  const perWindow = limits.perMinute + r;
  const admitted = Math.min(2 * limits.perDay, 1_441 * limits.perMinute);
  const usedUpWindows = Math.min(Math.floor((2 * limits.perDay) / limits.perMinute), 1_441) + 2;
  const rateLimit = Math.ceil(perWindow / 60);
  const burstLimit = 2 * perWindow;
  const quotaPerDay = admitted + r * usedUpWindows;
  return {
    rateLimit: Math.min(rateLimit, ACCOUNT_THROTTLE.rateLimit),
    burstLimit: Math.min(burstLimit, ACCOUNT_THROTTLE.burstLimit),
    quotaPerDay: Math.min(quotaPerDay, MAX_QUOTA),
    guaranteed:
      rateLimit <= ACCOUNT_THROTTLE.rateLimit && burstLimit <= ACCOUNT_THROTTLE.burstLimit && quotaPerDay <= MAX_QUOTA,
  };
}

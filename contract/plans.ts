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
 * How a plan maps onto an API Gateway usage plan (the best-effort backstop, set at or just above the app limits):
 * a token bucket refilled at ceil(perMinute / 60) requests per second, with a burst that holds one whole minute's
 * budget, and the day quota as is.
 */
export function usagePlanThrottle(limits: PlanLimits): { rateLimit: number; burstLimit: number; quotaPerDay: number } {
  return {
    rateLimit: Math.ceil(limits.perMinute / 60),
    burstLimit: limits.perMinute,
    quotaPerDay: limits.perDay,
  };
}

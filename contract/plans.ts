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

/**
 * How the limiter counts (lambdas/domain/rate-limit.ts; docs/rate-limiting.md gives the argument and the measured
 * figures):
 * - keys with a per-minute limit up to `exactPerMinute` count every request with one conditional write: exact, and
 *   at most 1,000 requests in a minute, so even a whole minute sent in one second stays far under an item's
 *   1,000 write units per second;
 * - larger keys take leases: a container takes a block of the window's budget with one conditional write (about
 *   `leaseSeconds` of its own traffic, at most 1/`leasesPerShardWindow` of a shard's minute) and admits locally;
 *   a lease lasts `leaseTtlMs`, and what is left of it goes back with the container's next take;
 * - a key's budget is split over ceil(perMinute / `shardPerMinute`) counter items (shards), so no item takes more
 *   than a shard's share of the writes;
 * - `maxSkewMs`: how far containers' clocks may disagree; a full window is reopened that early for a request
 *   stamped in its last moments, so a client that waited Retry-After is never refused twice in one window;
 * - `rejectionFlushMs`: a container adds up its 429s and records them at most this often per key (for the ban).
 */
export const LIMITER = {
  exactPerMinute: 1_000,
  shardPerMinute: 100_000,
  leaseSeconds: 2,
  leaseTtlMs: 4_000,
  leasesPerShardWindow: 100,
  maxSkewMs: 1_000,
  rejectionFlushMs: 1_000,
} as const;

/** How many counter items a key's budget is split over. */
export function limiterShards(limits: PlanLimits): number {
  return Math.max(1, Math.ceil(limits.perMinute / LIMITER.shardPerMinute));
}

/** Shard `i`'s part of a key's limits: the budget split as evenly as whole numbers allow. */
export function shardLimits(limits: PlanLimits, i: number): PlanLimits {
  const n = limiterShards(limits);
  const part = (total: number) => Math.floor(total / n) + (i < total % n ? 1 : 0);
  return { perMinute: part(limits.perMinute), perDay: part(limits.perDay) };
}

/**
 * API Gateway's default account-level throttle per Region ("Amazon API Gateway quotas": 10,000 requests per
 * second with a token bucket of 5,000; 2,500 and 1,250 in some newer Regions). A usage plan's per-client limits
 * cannot be higher than the account's, and every key of the account shares the account bucket.
 */
export const ACCOUNT_THROTTLE = { rateLimit: 10_000, burstLimit: 5_000 } as const;

/**
 * The operations a stage serves: each is a method with its own stage bucket, and the stage's rate is split evenly
 * over them (lib/config/capacity.ts edgeFor), so a flood on one method leaves the others served.
 */
export const OPERATION_COUNT = 4;

/**
 * Upper bounds an admin may set for an Enterprise key: what one method of a stage with the whole account serves
 * (10,000 requests per second split over OPERATION_COUNT methods), so no key is sold more than the gateway lets
 * through on one method, and no key can hold the account.
 */
export const MAX_CUSTOM_LIMITS: PlanLimits = {
  perMinute: Math.floor(ACCOUNT_THROTTLE.rateLimit / OPERATION_COUNT) * 60,
  perDay: Math.floor(ACCOUNT_THROTTLE.rateLimit / OPERATION_COUNT) * 86_400,
};

/**
 * The counter items storage reads per key: keys agreed at the whole account's rate (600,000 a minute) have 6, and
 * a key's shard count is fixed by its limits, so storage keeps reading that many.
 */
export const MAX_LIMITER_SHARDS = limiterShards({
  perMinute: ACCOUNT_THROTTLE.rateLimit * 60,
  perDay: ACCOUNT_THROTTLE.rateLimit * 86_400,
});

/**
 * What one key may send at once (the same instant), whatever its plan: the stage's smallest method bucket holds
 * it twice (lib/config/capacity.ts), so two keys bursting together on one method are both served. More at once
 * may get the gateway's 429 with `Retry-After: 1`; spread over the minute, a key gets its whole per-minute limit.
 */
export const KEY_BURST = 50;

/**
 * The temporary ban of spec section 8.3: it follows requests that keep coming after the client was told 429.
 * A client that honours Retry-After waits for the window's reset after its 429, so a fleet of W such workers on one
 * key gets at most W 429s per minute window, whatever their spacing. A key is banned for `banSeconds` when one
 * window sees more 429s (rate_limited or quota_exceeded alike: a key whose day is spent and keeps sending is banned
 * too) than a fleet of `banThreshold` workers could cause: max(`fleetWorkers`, perMinute). A client that ignores
 * Retry-After and sends N per minute gets N - perMinute 429s per window, so it is banned once N > perMinute +
 * banThreshold (Free: 161/min, 2.7 requests/s); once its day is spent, once N > banThreshold.
 * A key banned again the same UTC day is banned twice as long as the time before (15, 30, 60, 120 minutes, then
 * `maxBanSeconds`): an abuser that comes back after each ban spends the day banned, not in 15-minute cycles.
 */
export const BAN_POLICY = { fleetWorkers: 100, banSeconds: 15 * 60, maxBanSeconds: 4 * 3600 } as const;

/** How long the `nth` ban of a key in one UTC day lasts (1: the first). */
export function banSecondsFor(nth: number): number {
  return Math.min(BAN_POLICY.maxBanSeconds, BAN_POLICY.banSeconds * 2 ** Math.max(0, Math.min(nth - 1, 16)));
}

/** 429s in one minute window above which a key is banned: more than a fleet this size can cause by honouring them. */
export function banThreshold(limits: PlanLimits): number {
  return Math.max(BAN_POLICY.fleetWorkers, limits.perMinute);
}

/**
 * Each plan's usage plan and its one API key (aws-samples' serverless SaaS reference does the same per tier): the
 * authorizer names the key of the caller's plan, so API Gateway counts every key of a plan against that plan's
 * throttle. Per-key limits are the functions' limiter's (exact); the plan's throttle bounds the plan as a whole
 * (lib/config/capacity.ts planThrottles sizes it). The value grants nothing (the API takes usage keys from the
 * authorizer only, never from a client), so it need not be secret; it names the stage because API key values are
 * unique per account and Region, which two stages may share. Alphanumeric, 30 to 128 characters, as API Gateway
 * requires.
 */
export function planUsageKeyValue(stage: string, plan: PlanName): string {
  return `animalstoreplan${plan}stage${stage.replace(/[^A-Za-z0-9]/g, '')}`.padEnd(32, '0');
}

/** The share of the stage's throttle the Free plan's usage plan gets unless the stage says otherwise. */
export const DEFAULT_FREE_SHARE = 0.5;

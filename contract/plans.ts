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
 * How the limiter counts (lambdas/domain/rate-limit.ts; docs/keys-and-limits.md gives the argument).
 * - `exactPerMinute`: keys up to this per-minute limit count every request with one conditional write. That is exact.
 *   Even a whole minute's requests in one second stay far under an item's 1,000 write units per second.
 * - Larger keys take leases: a container takes a block of the window's budget with one conditional write and admits
 *   locally. A block is about `leaseSeconds` of its own traffic, at most 1/`leasesPerShardWindow` of a shard's minute.
 *   A lease lasts `leaseTtlMs`; what is left of it goes back with the container's next take.
 * - `shardPerMinute`: a key's budget is split over ceil(perMinute / shardPerMinute) counter items (shards).
 *   So no item takes more than a shard's share of the writes.
 * - `maxSkewMs`: how far containers' clocks may disagree. A full window reopens this early for a request stamped in
 *   its last moments, so a client that waited Retry-After is never refused twice in one window.
 * - `rejectionFlushMs`: a container adds up its 429s and records them (for the ban) at most this often per key.
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
 * API Gateway's default account-level throttle per Region: 10,000 requests per second, bucket 5,000 ("Amazon API
 * Gateway quotas"; 2,500 and 1,250 in some newer Regions). A usage plan's per-client limits cannot exceed it.
 * Every key of the account shares its bucket.
 */
export const ACCOUNT_THROTTLE = { rateLimit: 10_000, burstLimit: 5_000 } as const;

/**
 * The operations a stage serves. Each is a method with its own stage bucket, and the stage's rate is split evenly
 * over them (lib/config/capacity.ts edgeFor). So a flood on one method leaves the others served.
 */
export const OPERATION_COUNT = 4;

/**
 * The highest limits an admin may set for an Enterprise key: what one method serves with the whole account's rate
 * (10,000 requests per second over OPERATION_COUNT methods). No key is sold more than the gateway passes on one
 * method, and no key can hold the account.
 */
export const MAX_CUSTOM_LIMITS: PlanLimits = {
  perMinute: Math.floor(ACCOUNT_THROTTLE.rateLimit / OPERATION_COUNT) * 60,
  perDay: Math.floor(ACCOUNT_THROTTLE.rateLimit / OPERATION_COUNT) * 86_400,
};

/**
 * The counter items storage reads per key: 6, those of a key agreed at the whole account's rate (600,000 a minute).
 * A key's shard count follows from its limits, so reading this many covers any key.
 */
export const MAX_LIMITER_SHARDS = limiterShards({
  perMinute: ACCOUNT_THROTTLE.rateLimit * 60,
  perDay: ACCOUNT_THROTTLE.rateLimit * 86_400,
});

/**
 * What one key may send at the same instant, whatever its plan. The stage's smallest method bucket holds it twice
 * (lib/config/capacity.ts), so two keys bursting together on one method are both served. More at once may get the
 * gateway's 429 with `Retry-After: 1`. Spread over the minute, a key gets its whole per-minute limit.
 */
export const KEY_BURST = 50;

/**
 * The temporary ban (spec section 8.3), for requests that keep coming after a 429. W workers that honour Retry-After
 * get at most W 429s per minute window. So a key is banned for `banSeconds` when one window sees more 429s than
 * banThreshold: max(`fleetWorkers`, perMinute). Both 429 codes count, so a spent key that keeps sending is banned too.
 * Each further ban in the same UTC day lasts twice as long, up to `maxBanSeconds`.
 * So an abuser that comes back after each ban spends the day banned.
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
 * The value of the one API key of each plan's usage plan. The authorizer names the key of the caller's plan, so API
 * Gateway counts all of a plan's keys against the plan's throttle (sized by lib/config/capacity.ts planThrottles).
 * Per-key limits are the limiter's. The value grants nothing (usage keys come only from the authorizer), so it need
 * not be secret. It names the stage: API key values are unique per account and Region, which stages may share.
 * API Gateway requires 30 to 128 alphanumeric characters.
 */
export function planUsageKeyValue(stage: string, plan: PlanName): string {
  return `animalstoreplan${plan}stage${stage.replace(/[^A-Za-z0-9]/g, '')}`.padEnd(32, '0');
}

/** The share of the stage's throttle the Free plan's usage plan gets unless the stage says otherwise. */
export const DEFAULT_FREE_SHARE = 0.5;

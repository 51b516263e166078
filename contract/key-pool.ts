/**
 * Customer keys past API Gateway's quota of 10,000 API keys per account and Region (not raisable; CreateApiKey is
 * limited to 5 calls per second per account). Paying plans keep one API Gateway API key per customer (their own
 * usage-plan backstop, and Enterprise a usage plan of its own); Free keys share a fixed pool of API keys, created with
 * the stack: a key id maps to one pool member, whose usage plan is sized for the Free customers that share it.
 * Revocations (and so every Free key's life) are the authorizer's business: a pool member is never deleted or
 * disabled for one customer. docs/deployment.md, "Customer keys: the ceiling and the path past it", has the numbers.
 *
 * Plain data and arithmetic, no imports beyond the plans table, so the stack, the admin tool and the authorizer
 * share one mapping.
 */
import { ACCOUNT_THROTTLE, PLANS, usagePlanThrottle, type PlanName, type UsagePlanLimits } from './plans.ts';

/** API Gateway's quota of API keys per account and Region: every stage in that account and Region shares it. */
export const API_KEYS_PER_ACCOUNT_REGION = 10_000;

export const FREE_KEY_POOL = {
  /** The plans whose keys share the pool. */
  plans: ['free'] as readonly PlanName[],
  /**
   * API keys in the pool, per stage. Each costs two template resources (the key and its usage-plan key;
   * CloudFormation allows 500 per template) and one of the account's 10,000 API keys.
   */
  members: 64,
  /**
   * Free customers of one member that its usage plan admits at their full rate at once (the plan is this many Free
   * customers' usage plans added up: each one's bucket holds two windows and a fleet's 429s, 320 requests, so 15 is
   * the most under the account bucket of 5,000). More of them at once on one member meet the gateway's 429 early;
   * one runaway client is stopped at this many times a Free client's allowance.
   */
  customersAtFullRate: 15,
  /** The usage plan's display name (after the stack's name prefix). */
  displayName: 'FreePool',
} as const;

/** Whether a key of this plan goes in the pool; a key that already has an API key of its own keeps it. */
export const isPooledPlan = (plan: PlanName): boolean => FREE_KEY_POOL.plans.includes(plan);

/**
 * The pool's usage plan: customersAtFullRate Free customers' usage plans (usagePlanThrottle) added up, so each of
 * them gets what its own plan would give it, within the account's throttle.
 */
export function poolThrottle(): UsagePlanLimits {
  const one = usagePlanThrottle(PLANS.free.limits!);
  const n = FREE_KEY_POOL.customersAtFullRate;
  const rateLimit = one.rateLimit * n;
  const burstLimit = one.burstLimit * n;
  return {
    rateLimit,
    burstLimit,
    quotaPerDay: one.quotaPerDay * n,
    guaranteed: one.guaranteed && rateLimit <= ACCOUNT_THROTTLE.rateLimit && burstLimit <= ACCOUNT_THROTTLE.burstLimit,
  };
}

/**
 * The pool member a key id maps to: FNV-1a (32-bit) of the key id, modulo the pool size. Stable for the key's life
 * (the key id never changes, rotations included), spread evenly over members for random key ids (`generateKeyId`);
 * ids chosen on purpose could collide.
 */
export function poolMemberOf(keyId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < keyId.length; i++) {
    h ^= keyId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % FREE_KEY_POOL.members;
}

/**
 * The value of a pool member's API key (what the authorizer returns as usageIdentifierKey). It grants nothing (the
 * API takes keys from the authorizer only, never from a client), so it need not be secret; it names the stage
 * because API key values are unique per account and Region, which two stages may share. Alphanumeric, 30 to 128
 * characters, as API Gateway requires.
 */
export function poolKeyValue(stage: string, member: number): string {
  if (!Number.isInteger(member) || member < 0 || member >= FREE_KEY_POOL.members)
    throw new Error(`no pool member ${member}`);
  return `animalstorefreepoolmember${stage.replace(/[^A-Za-z0-9]/g, '')}${String(member).padStart(4, '0')}`;
}

/**
 * Where a key whose day quota is spent is counted from then on: one API key per stage on a usage plan whose day
 * quota is always spent, so API Gateway itself answers the key's requests (QUOTA_EXCEEDED: 429 `quota_exceeded`)
 * before they reach a function or count against what the key shares (a Free key's pool member). The authorizer
 * names it, and its decision is cached for the authorizer's TTL, so a flood from a spent key costs no reads.
 */
export const SPENT_KEYS = {
  /** The usage plan's display name (after the stack's name prefix). */
  displayName: 'SpentDayQuota',
  /**
   * The plan's day quota. API Gateway admits this many requests a day over every spent key together; each one
   * reaches its function, whose limiter refuses it with the exact headers.
   */
  quotaPerDay: 1,
  /**
   * A key is sent here only before the last this-many seconds of its UTC day, longer than any stage's authorizer
   * cache TTL (lib/config/stages.ts checks), so no cached decision outlives the day the key spent.
   */
  notInLastSeconds: 300,
} as const;

/** The value of the spent-keys API key on `stage` (grants nothing, like a pool member's; unique per stage). */
export function spentKeyValue(stage: string): string {
  return `animalstorespentdayquota${stage.replace(/[^A-Za-z0-9]/g, '')}`.padEnd(32, '0');
}

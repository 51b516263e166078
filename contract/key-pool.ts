/**
 * Customer keys past API Gateway's quota of 10,000 API keys per account and Region (not raisable; CreateApiKey is
 * limited to 5 calls per second per account). No customer has an API Gateway API key of its own: every key shares a
 * fixed pool of API keys of its plan (Free, Pro, Business: created with the stack) or of its Enterprise bracket
 * (brackets.ts: created by the admin tool on the bracket's first use). A key id maps to one pool member, whose usage
 * plan admits what the account admits (MEMBER_PLAN). So the number of API keys and usage plans per stage, and their
 * figures, are constants of the template and the brackets, whatever the number of customers, and creating, revoking
 * or moving a key calls no API Gateway API (only an Enterprise bracket's first key creates its pool, idempotently).
 * Revocations are the authorizer's business: a pool member is never deleted or disabled for one customer.
 * docs/deployment.md, "Customer keys: the ceiling and the path past it", has the numbers.
 *
 * Plain data and arithmetic, no imports beyond the plans table and brackets, so the stack, the admin tool and the
 * authorizer share one mapping.
 */
import { enterpriseBracket } from './brackets.ts';
import { MEMBER_PLAN, type PlanLimits, type PlanName, type UsagePlanLimits } from './plans.ts';

export { MEMBER_PLAN } from './plans.ts';

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
  /** The usage plan's display name (after the stack's name prefix). */
  displayName: 'FreePool',
} as const;

/**
 * The paying plans' pools, created with the stack like the Free pool, and on usage plans of the same figures
 * (poolThrottle).
 */
export const PAYING_POOLS = {
  pro: { members: 16, displayName: 'ProPool', logicalPrefix: 'ProPool' },
  business: { members: 16, displayName: 'BusinessPool', logicalPrefix: 'BusinessPool' },
} as const;
export type PayingPoolPlan = keyof typeof PAYING_POOLS;

/**
 * An Enterprise bracket's pool, made with the bracket's usage plan on first use: `members` API keys that key ids map
 * to, and one probation member after them (contract/probation.ts): `apiKeys` in all on the bracket's plan.
 */
export const BRACKET_POOL = { members: 4, apiKeys: 5 } as const;

/**
 * Every plan's keys share a pool; a key that still has an API key of its own (made before pools) keeps it until the
 * admin tool's reconcile moves it into its pool (lib/admin/reconcile.ts).
 */
export const isPooledPlan = (_plan: PlanName): boolean => true;

/** A pool's usage plan (every plan's pools alike: MEMBER_PLAN). */
export function poolThrottle(_plan: Exclude<PlanName, 'enterprise'> = 'free'): UsagePlanLimits {
  return MEMBER_PLAN;
}

/**
 * The pool member a key id maps to: FNV-1a (32-bit) of the key id, modulo the pool size (the Free pool's unless
 * told). Stable for the key's life (the key id never changes, rotations included), spread evenly over members for
 * random key ids (`generateKeyId`); ids chosen on purpose could collide.
 */
export function poolMemberOf(keyId: string, members: number = FREE_KEY_POOL.members): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < keyId.length; i++) {
    h ^= keyId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % members;
}

const alnum = (s: string) => s.replace(/[^A-Za-z0-9]/g, '');

/** The value of member `member` of a paying plan's pool on `stage` (grants nothing, like a Free member's). */
export function payingPoolKeyValue(stage: string, plan: PayingPoolPlan, member: number): string {
  if (!Number.isInteger(member) || member < 0 || member >= PAYING_POOLS[plan].members)
    throw new Error(`no ${plan} pool member ${member}`);
  return `animalstorekeypool${plan}stage${alnum(stage)}member${String(member).padStart(4, '0')}`;
}

/** The value of member `member` of an Enterprise bracket's pool on `stage`. */
export function bracketPoolKeyValue(stage: string, bracketId: string, member: number): string {
  return `animalstorebracketpool${alnum(bracketId)}stage${alnum(stage)}member${String(member).padStart(4, '0')}`;
}

/**
 * The API key value of the pool member a key counts against on `stage`: its plan's pool (or its Enterprise
 * bracket's), the member its key id maps to.
 */
export function poolValueOf(record: { keyId: string; plan: PlanName; limits?: PlanLimits }, stage: string): string {
  if (record.plan === 'free') return poolKeyValue(stage, poolMemberOf(record.keyId));
  if (record.plan === 'enterprise') {
    const bracket = enterpriseBracket(record.limits!);
    return bracketPoolKeyValue(stage, bracket.id, poolMemberOf(record.keyId, BRACKET_POOL.members));
  }
  return payingPoolKeyValue(stage, record.plan, poolMemberOf(record.keyId, PAYING_POOLS[record.plan].members));
}

/**
 * Whether a usage key is a pool member (of the Free pool, a paying plan's pool or an Enterprise bracket's), which
 * probation moves a key off (contract/probation.ts); a key with an API key of its own (made before pools) spends only
 * its own and stays on it.
 */
export const isPoolMemberKey = (value: string): boolean =>
  value.startsWith('animalstorefreepoolmember') ||
  value.startsWith('animalstorekeypool') ||
  value.startsWith('animalstorebracketpool');

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

/**
 * The logical ids of the stack's usage plans and its own API keys, as constants (no aws-cdk-lib import: the local
 * gateway reads them on every start). CloudFormation identifies a resource by its logical id, and an API key's value
 * is unique per account and Region: a changed id would create a second key with the same value (refused) or a new
 * usage plan without the keys attached to the old one (403 for their callers). So no id, and no API key name (a
 * property whose change replaces the key), derives from a display name: renaming a plan only renames it.
 */
import type { PlanName } from '../../contract/plans.ts';

/** A standard plan's usage plan: keyed by the plan's stable name (`free` → `UsagePlanFree`). */
export const standardPlanLogicalId = (plan: PlanName): string => `UsagePlan${plan[0]!.toUpperCase()}${plan.slice(1)}`;

/** The Free key pool's usage plan. */
export const POOL_PLAN_LOGICAL_ID = 'UsagePlanFreePool';

/** Pool member n's API key (and `…Plan`, its usage plan key): the member number, never renumbered. */
export const poolMemberLogicalId = (member: number): string => `FreePoolMember${String(member).padStart(4, '0')}`;

/** A paying plan's pool (contract/key-pool.ts PAYING_POOLS): its usage plan, and member n's API key (`…Plan`). */
export const payingPoolPlanLogicalId = (prefix: string): string => `UsagePlan${prefix}`;
export const payingPoolMemberLogicalId = (prefix: string, member: number): string =>
  `${prefix}Member${String(member).padStart(4, '0')}`;

/** The spent-keys usage plan, its one API key and that key's usage plan key. */
export const SPENT_PLAN_LOGICAL_ID = 'UsagePlanSpentDayQuota';
export const SPENT_KEY_LOGICAL_ID = 'SpentDayQuotaKey';
export const SPENT_KEY_PLAN_LOGICAL_ID = 'SpentDayQuotaKeyPlan';

/**
 * The Free pool's probation API keys (Free keys whose ban ended in the last day) and their usage plan keys (`…Plan`):
 * shard 0 keeps the id the single probation key had, the others add their number.
 */
export const PROBATION_KEY_LOGICAL_ID = 'FreePoolProbationKey';
export const probationKeyLogicalId = (shard: number): string =>
  shard === 0 ? PROBATION_KEY_LOGICAL_ID : `${PROBATION_KEY_LOGICAL_ID}${String(shard).padStart(2, '0')}`;

/** A paying plan's probation shard's API key (and `…Plan`, its usage plan key): `ProPoolProbation00`. */
export const payingProbationLogicalId = (prefix: string, shard: number): string =>
  `${prefix}Probation${String(shard).padStart(2, '0')}`;

/**
 * The logical ids of the stack's usage plans and API keys, as constants (no aws-cdk-lib import: the local gateway
 * reads them on every start). CloudFormation identifies a resource by its logical id, and an API key's value is
 * unique per account and Region: a changed id would create a second key with the same value (refused) or a new usage
 * plan without the keys attached to the old one (403 for their callers). So no id, and no API key name (a property
 * whose change replaces the key), derives from a display name: renaming a plan only renames it.
 */
import type { PlanName } from '../../contract/plans.ts';

const capitalized = (plan: PlanName) => `${plan[0]!.toUpperCase()}${plan.slice(1)}`;

/** A plan's usage plan: keyed by the plan's stable name (`free` → `UsagePlanFree`). */
export const planUsagePlanLogicalId = (plan: PlanName): string => `UsagePlan${capitalized(plan)}`;

/** A plan's one API key (`PlanKeyFree`), and its usage plan key (`PlanKeyFreePlan`). */
export const planKeyLogicalId = (plan: PlanName): string => `PlanKey${capitalized(plan)}`;
export const planKeyPlanLogicalId = (plan: PlanName): string => `${planKeyLogicalId(plan)}Plan`;

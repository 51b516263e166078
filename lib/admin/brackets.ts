/**
 * Enterprise brackets (contract/brackets.ts) as the admin tool names them at the gateway: a stage's usage plan per
 * bracket and the pool of API keys on it (contract/key-pool.ts), both created on first use and found by name after.
 */
import { enterpriseBracket, type Bracket } from '../../contract/brackets.ts';
import { BRACKET_POOL, bracketPoolKeyValue } from '../../contract/key-pool.ts';
import type { PlanLimits } from '../../contract/plans.ts';

export { ENTERPRISE_BRACKETS, enterpriseBracket, ladderUp, type Bracket } from '../../contract/brackets.ts';

/** The name of a stage's usage plan for a bracket (found by name: the admin tool creates it on first use). */
export const bracketPlanName = (stage: string, bracket: Bracket) => `animal-store-${stage}-enterprise-${bracket.id}`;

/**
 * The API keys of a bracket's pool on a stage: name and value of each member, the probation member (the last, whose
 * number no key id maps to: contract/probation.ts) included.
 */
export function bracketPoolKeys(stage: string, limits: PlanLimits): Array<{ name: string; value: string }> {
  const bracket = enterpriseBracket(limits);
  return Array.from({ length: BRACKET_POOL.apiKeys }, (_, m) => ({
    name: `${bracketPlanName(stage, bracket)}-m${m}`,
    value: bracketPoolKeyValue(stage, bracket.id, m),
  }));
}

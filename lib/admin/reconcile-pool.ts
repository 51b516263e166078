/**
 * An Enterprise bracket's pool at the gateway (contract/key-pool.ts BRACKET_POOL): the bracket's usage plan on the
 * stage and its member API keys on it, its probation member included (contract/probation.ts). The stack makes the
 * standard plans' pools; a bracket's is made by the admin tool before the first record names it, so the authorizer
 * never names a member that is not there (API Gateway would answer 403). Every step finds its work done when it is: a
 * plan or key of that name (or value) is found, not made twice, so a pool a failure left half-made is finished by the
 * next command that needs it.
 *
 * The probation member is named by the authorizer only once the data says it exists (lambdas/storage/
 * bracket-probation.ts): after it is on the bracket's plan, the pool's record is written, in that order. A bracket
 * made before probation members existed (or whose record a failure left unwritten) keeps its keys on probation
 * counted on their ordinary members, and is completed (member made, then recorded) by the next command that needs
 * the bracket, or `keys reconcile --all`.
 */
import type { PlanLimits } from '../../contract/plans.ts';
import { bracketProbationKeyValue } from '../../contract/probation.ts';
import { recordBracketProbation, recordedBracketProbation } from '../../lambdas/storage/bracket-probation.ts';
import { bracketPlanName, bracketPoolKeys, enterpriseBracket } from './brackets.ts';
import type { AdminContext } from './context.ts';

/** Makes sure the pool of the bracket of `limits` is complete; answers what it had to make ([] when complete). */
export async function ensureBracketPool(ctx: AdminContext, limits: PlanLimits): Promise<string[]> {
  const bracket = enterpriseBracket(limits);
  if (ctx.pools.has(bracket.id)) return [];
  const { gateway, stage } = ctx.deps;
  const made: string[] = [];
  const name = bracketPlanName(stage, bracket);
  let planId = await gateway.findPlan(name);
  if (!planId) {
    planId = await gateway.createPlan(name, bracket);
    // No id: a target without API Gateway (`--local`), where the local gateway applies the bracket itself, its
    // probation member included: recorded as such.
    if (!planId) {
      made.push(...(await recordProbation(ctx, bracket.id)));
      ctx.pools.add(bracket.id);
      return made;
    }
    made.push(`usage plan ${name}`);
  } else {
    // A bracket's plan made when brackets had figures of their own (sized for one customer, so the eleventh customer
    // of a member was refused) takes the pool member's figures: its id and members stay, so no key moves.
    const now = await gateway.planLimits(planId);
    if (
      !now ||
      now.rateLimit !== bracket.rateLimit ||
      now.burstLimit !== bracket.burstLimit ||
      now.quotaPerDay !== bracket.quotaPerDay
    ) {
      await gateway.updatePlan(planId, bracket);
      made.push(
        `usage plan ${name}: ${bracket.rateLimit}/s, bucket ${bracket.burstLimit}, ${bracket.quotaPerDay} a day`,
      );
    }
  }
  const on = new Set(await gateway.planKeyValues(planId));
  for (const member of bracketPoolKeys(stage, limits)) {
    if (on.has(member.value)) continue;
    // A member made earlier but not attached (a failure between the two) is found by its name, not made again.
    const apiKeyId = await gateway.createKey(member.name, member.value);
    await gateway.attach(apiKeyId, planId);
    made.push(`pool member ${member.name}`);
  }
  // Only now, every member on the plan: the authorizer names the probation member from the record on.
  made.push(...(await recordProbation(ctx, bracket.id)));
  ctx.pools.add(bracket.id);
  return made;
}

/**
 * Records the bracket's probation member (on its plan by now) where the authorizer reads it; [] when it already is.
 * A target without storage of its own (a test's stand-in) records nothing: the authorizer then keeps the bracket's
 * keys on their ordinary members, which exist.
 */
async function recordProbation(ctx: AdminContext, bracketId: string): Promise<string[]> {
  const { storage, stage } = ctx.deps;
  if (!storage) return [];
  const member = bracketProbationKeyValue(stage, bracketId);
  if ((await recordedBracketProbation(storage, bracketId)) !== undefined) return [];
  await recordBracketProbation(storage, bracketId, member);
  return [`record of bracket ${bracketId}'s probation member (the authorizer counts its keys on probation there)`];
}

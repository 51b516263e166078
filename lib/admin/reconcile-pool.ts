/**
 * An Enterprise bracket's pool at the gateway (contract/key-pool.ts BRACKET_POOL): the bracket's usage plan on the
 * stage and its member API keys on it, its probation member included (contract/probation.ts; a pool made before it
 * gains it on the next command that needs the bracket, or `keys reconcile --all`). The stack makes the standard plans' pools; a bracket's is made by the admin
 * tool before the first record names it, so the authorizer never names a member that is not there (API Gateway would
 * answer 403). Every step finds its work done when it is: a plan or key of that name (or value) is found, not made
 * twice, so a pool a failure left half-made is finished by the next command that needs it.
 */
import type { PlanLimits } from '../../contract/plans.ts';
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
    // No id: a target without API Gateway (`--local`), where the local gateway applies the bracket itself.
    if (!planId) {
      ctx.pools.add(bracket.id);
      return [];
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
  ctx.pools.add(bracket.id);
  return made;
}

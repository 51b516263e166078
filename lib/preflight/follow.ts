/**
 * The follow rule: which deployed stacks this release may update. Its authorizer names, for every key, its plan's
 * API key (contract/plans.ts planUsageKeyValue). An older authorizer named others (release 3357b0c's Free pool,
 * probation and spent-day keys), and API Gateway keeps answering with its cached decisions for up to the cache TTL
 * after the deploy: a key they name that the update deletes gets 403. So the plan keys must be there before this
 * release names them (release plan-keys-1 makes them), and every API key, usage plan key or usage plan this template
 * drops must be kept by the deployed template (DeletionPolicy Retain: plan-keys-1 keeps 3357b0c's), for
 * `keys remove-release-api-keys` to delete once nothing names them.
 */
import { PLAN_NAMES, planUsageKeyValue, type PlanName } from '../../contract/plans.ts';
import { referencedIds, resourcesOfType, type CfnTemplate } from './template.ts';

/** The release that takes a stack this one cannot follow to one it can: named here only. */
export const INTERMEDIATE_RELEASE = 'release plan-keys-1 (docs/deployment.md, Upgrading from 3357b0c)';

/** The resources an authorizer's answer depends on: the key it names, its attachment, the usage plan counting it. */
const GATEWAY_KEY_TYPES = new Set([
  'AWS::ApiGateway::ApiKey',
  'AWS::ApiGateway::UsagePlanKey',
  'AWS::ApiGateway::UsagePlan',
]);

/** The logical ids of a template's plan API keys (by plan, those it has): its API keys of those values. */
export function planKeyIds(template: CfnTemplate, stage: string): Map<PlanName, string> {
  const byValue = new Map(
    resourcesOfType(template, 'AWS::ApiGateway::ApiKey').map(([id, r]) => [r.Properties?.Value, id]),
  );
  const ids = new Map<PlanName, string>();
  for (const plan of PLAN_NAMES) {
    const id = byValue.get(planUsageKeyValue(stage, plan));
    if (id) ids.set(plan, id);
  }
  return ids;
}

/** The plan keys, their usage plan keys and the usage plans those attach them to, by logical id. */
function planKeyResources(template: CfnTemplate, keys: ReadonlySet<string>): Set<string> {
  const own = new Set(keys);
  for (const [id, r] of resourcesOfType(template, 'AWS::ApiGateway::UsagePlanKey')) {
    const [key] = referencedIds(r.Properties?.KeyId);
    if (!key || !keys.has(key)) continue;
    own.add(id);
    for (const plan of referencedIds(r.Properties?.UsagePlanId)) own.add(plan);
  }
  return own;
}

/** Logical ids named in a finding; the rest are counted. */
const NAMED = 3;

/**
 * The gateway key resources (API keys, usage plan keys, usage plans) the update drops that this rule judges, so the
 * update rules add no line of their own for them, and its findings. The plan keys' own are left to the update rules
 * (which refuse their deletion as any other's). Every other one dropped must be retained by the deployed template,
 * and the deployed template must have every plan key.
 */
export function followRule(
  stage: string,
  previous: CfnTemplate,
  next: CfnTemplate,
): { judged: Set<string>; findings: string[] } {
  const keys = planKeyIds(previous, stage);
  const own = planKeyResources(previous, new Set(keys.values()));
  const dropped = Object.entries(previous.Resources)
    .filter(([id, r]) => GATEWAY_KEY_TYPES.has(r.Type) && !(id in next.Resources) && !own.has(id))
    .map(([id]) => id);
  const deleted = dropped.filter((id) => previous.Resources[id]!.DeletionPolicy !== 'Retain');
  const judged = new Set(dropped);
  if (!deleted.length) return { judged, findings: [] };
  const more = deleted.length > NAMED ? `, and ${deleted.length - NAMED} more` : '';
  const named = `${deleted.slice(0, NAMED).join(', ')}${more}`;
  const missing = PLAN_NAMES.filter((p) => !keys.has(p));
  return {
    judged,
    findings: [
      missing.length
        ? `update: the deployed stack lacks the plan API keys (${missing.join(', ')}), and this template deletes ` +
          `API keys and usage plans its authorizer's cached answers still name (${named}), so their callers would ` +
          `get 403: deploy ${INTERMEDIATE_RELEASE} first, then this release`
        : `update: this template deletes API keys and usage plans the deployed template does not retain (${named}): ` +
          `answers its authorizer cached may name them, and their callers would get 403; deploy ${INTERMEDIATE_RELEASE} ` +
          'or a release that retains them first',
    ],
  };
}

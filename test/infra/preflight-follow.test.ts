/**
 * Preflight's follow rule (lib/preflight/follow.ts) on the templates of releases 3357b0c and plan-keys-1 as deployed
 * (test/fixtures/releases/) and on templates built from them: this release drops the API keys and usage plans an
 * older authorizer named, so it refuses a stack without the plan API keys, or one that would delete them rather than
 * keep them (one line naming the release to deploy first), and follows plan-keys-1 (or nothing: a first deploy).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PLAN_NAMES, PLANS, planUsageKeyValue } from '../../contract/plans.ts';
import { STAGES } from '../../lib/config/stages.ts';
import {
  deployedStackCheck,
  previousTemplateCheck,
  runChecks,
  type DeployedStack,
  type PreflightInput,
} from '../../lib/preflight/checks.ts';
import { INTERMEDIATE_RELEASE, planKeyIds } from '../../lib/preflight/follow.ts';
import type { CfnResource, CfnTemplate } from '../../lib/preflight/template.ts';
import { updateFindings } from '../../lib/preflight/update-rules.ts';
import { firstDeployContextKey } from '../../lib/stacks/first-deploy.ts';
import { planKeyLogicalId } from '../../lib/constructs/usage-plan-ids.ts';

const released = (release: string, stage: 'staging' | 'production'): CfnTemplate =>
  JSON.parse(
    readFileSync(
      new URL(`../fixtures/releases/${release}/${STAGES[stage].stackName}.template.json`, import.meta.url),
      'utf8',
    ),
  );

const usagePlanId = (plan: (typeof PLAN_NAMES)[number]) => `UsagePlan${PLANS[plan].displayName}`;

/** `t` with each plan's usage plan (Enterprise's added, on the API's stage as the others) and its one API key. */
function withPlanKeys(t: CfnTemplate, stage: string): CfnTemplate {
  const resources: Record<string, CfnResource> = { ...t.Resources };
  resources.UsagePlanEnterprise ??= { ...t.Resources.UsagePlanBusiness! };
  for (const plan of PLAN_NAMES) {
    const key = planKeyLogicalId(plan);
    resources[key] = {
      Type: 'AWS::ApiGateway::ApiKey',
      Properties: { Enabled: true, Name: `${stage}-${key}`, Value: planUsageKeyValue(stage, plan) },
    };
    resources[`${key}Plan`] = {
      Type: 'AWS::ApiGateway::UsagePlanKey',
      Properties: { KeyId: { Ref: key }, KeyType: 'API_KEY', UsagePlanId: { Ref: usagePlanId(plan) } },
    };
  }
  return { ...t, Resources: resources };
}

/** `t` without the API keys, their attachments and the usage plans other than the plan keys and their plans. */
function withoutOlderKeys(t: CfnTemplate, stage: string): CfnTemplate {
  const keys = new Set(planKeyIds(t, stage).values());
  const attachments = Object.entries(t.Resources).filter(
    ([, r]) => r.Type === 'AWS::ApiGateway::UsagePlanKey' && keys.has((r.Properties?.KeyId as { Ref: string }).Ref),
  );
  const kept = new Set([...PLAN_NAMES.map(usagePlanId), ...keys, ...attachments.map(([id]) => id)]);
  const older = ['AWS::ApiGateway::ApiKey', 'AWS::ApiGateway::UsagePlanKey', 'AWS::ApiGateway::UsagePlan'];
  const resources = Object.entries(t.Resources).filter(([id, r]) => kept.has(id) || !older.includes(r.Type));
  expect(planKeyIds(t, stage).size).toBe(PLAN_NAMES.length);
  return { ...t, Resources: Object.fromEntries(resources) };
}

/** The deployed-stack check's input for `template` over `deployed`, as the preflight command gives it. */
const input = (stage: string, template: CfnTemplate, deployed: DeployedStack, firstDeploy = false): PreflightInput =>
  ({
    stage,
    stackName: STAGES[stage as 'staging'].stackName,
    name: stage,
    template,
    terminationProtection: false,
    firstDeploy,
    firstDeployKey: firstDeployContextKey(stage),
    context: firstDeploy ? { [firstDeployContextKey(stage)]: 'true' } : {},
    deployed: async () => deployed,
    note: () => {},
  }) as unknown as PreflightInput;

const settled = (template: CfnTemplate): DeployedStack => ({
  state: 'present',
  status: 'UPDATE_COMPLETE',
  terminationProtection: false,
  template,
});

describe.each(['staging', 'production'] as const)('%s', (stage) => {
  const r3357b0c = released('3357b0c', stage);
  // The intermediate release: the plan keys added, every older key kept and retained.
  const intermediate = released('plan-keys-1', stage);
  // Its shape without the retention: this release would delete the older keys.
  const unretained = withPlanKeys(r3357b0c, stage);
  // This release's shape: the plan keys alone.
  const current = withoutOlderKeys(intermediate, stage);

  const refusal =
    `update: the deployed stack lacks the plan API keys (free, pro, business, enterprise), and this template ` +
    `deletes API keys and usage plans its authorizer's cached answers still name (UsagePlanFreePool, ` +
    `FreePoolMember0000, FreePoolMember0000Plan, and ` +
    `${Object.entries(r3357b0c.Resources).filter(([id, r]) => r.Type.startsWith('AWS::ApiGateway::') && /ApiKey|UsagePlan/.test(r.Type) && !(id in current.Resources)).length - 3} more), so their ` +
    `callers would get 403: deploy ${INTERMEDIATE_RELEASE} first, then this release`;

  it('refuses this release over 3357b0c as deployed: one line naming the release to deploy first', async () => {
    expect(planKeyIds(r3357b0c, stage).size).toBe(0);
    expect(updateFindings(r3357b0c, current, undefined, stage)).toEqual([refusal]);
    expect(await deployedStackCheck.run(input(stage, current, settled(r3357b0c)))).toEqual([
      `${refusal} (against the deployed stack)`,
    ]);
    expect(
      await runChecks({ ...input(stage, current, settled(r3357b0c)), previous: r3357b0c }, [previousTemplateCheck]),
    ).toEqual([refusal]);
  });

  it('follows a stack with the 4 plan keys, deleting the older keys; the intermediate release follows 3357b0c', async () => {
    expect(await deployedStackCheck.run(input(stage, current, settled(intermediate)))).toEqual([]);
    expect(await deployedStackCheck.run(input(stage, current, settled(current)))).toEqual([]);
    // Nothing deleted: 3357b0c's cached answers stay valid.
    expect(await deployedStackCheck.run(input(stage, intermediate, settled(r3357b0c)))).toEqual([]);
  });

  it('refuses a stack with the plan keys that does not retain the older ones', async () => {
    expect(await deployedStackCheck.run(input(stage, current, settled(unretained)))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^update: this template deletes API keys and usage plans the deployed template does not retain \\(UsagePlanFreePool, FreePoolMember0000, FreePoolMember0000Plan, and \\d+ more\\).*deploy ${INTERMEDIATE_RELEASE.replace(/[()]/g, '\\$&')}`,
        ),
      ),
    ]);
  });

  it('follows no stack at all (a first deploy)', async () => {
    expect(await deployedStackCheck.run(input(stage, current, { state: 'absent' }, true))).toEqual([]);
  });

  it("still refuses deleting a plan key, or its attachment, as any API key's", () => {
    const resources = { ...current.Resources };
    delete resources.PlanKeyPro;
    delete resources.PlanKeyProPlan;
    expect(updateFindings(current, { ...current, Resources: resources }, undefined, stage)).toEqual([
      'update: PlanKeyPro (AWS::ApiGateway::ApiKey) leaves the template: deleted or orphaned (a changed logical id replaces it)',
      'update: PlanKeyProPlan (AWS::ApiGateway::UsagePlanKey) leaves the template: deleted or orphaned (a changed logical id replaces it)',
    ]);
  });

  it('without the stage, names every API key and usage plan deleted', () => {
    const deleted = Object.keys(intermediate.Resources).filter((id) => !(id in current.Resources));
    expect(updateFindings(intermediate, current)).toHaveLength(deleted.length);
  });
});

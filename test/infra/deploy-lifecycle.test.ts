/**
 * Deploy, update, recover: what CloudFormation and the CDK CLI do with these templates that a synth does not check.
 * A failed first deploy leaves a stack the same command deploys again; a typical change (a function, a plan's
 * figures, a display name) replaces nothing stateful or fixed-name and updates usage plans one at a time; every
 * canary lasts long enough for its gates to fire; the account stack deploys first; API Gateway's execution log group
 * is the stack's. Bundling is skipped (cli.test.ts synthesizes with it).
 */
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PLANS, PLAN_NAMES } from '../../contract/plans.ts';
import { STAGES, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { ACCOUNT_SETTINGS_STACK } from '../../lib/stacks/account-settings-stack.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { firstDeployContextKey } from '../../lib/stacks/first-deploy.ts';
import { CLOUDWATCH_LAG_SECONDS, gateTimings, gatesThatCannotFire } from '../../lib/preflight/canary-timing.ts';
import { GATE_PERIOD_SECONDS } from '../../lib/config/deploy-gates.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { unorderedUsagePlans, updateFindings } from '../../lib/preflight/update-rules.ts';
import { SYNTH_CONTEXT } from './synth-context.ts';
import { TABLES } from '../../contract/tables.ts';
import { declaredTable, literally } from './declared.ts';

type App = ReturnType<typeof createApp>;
const synth = (context: Record<string, unknown> = {}): App => createApp({ context: { ...SYNTH_CONTEXT, ...context } });
const templatesOf = (app: App): Record<StageName, CfnTemplate> =>
  Object.fromEntries(STAGE_NAMES.map((n) => [n, Template.fromStack(app.stacks[n]).toJSON()])) as Record<
    StageName,
    CfnTemplate
  >;

let current: Record<StageName, CfnTemplate>;
let currentApp: App;
beforeAll(() => {
  currentApp = synth();
  current = templatesOf(currentApp);
}, 240_000);

/** Restores what a test changed in the shared configuration objects (a typical change, simulated). */
const restores: (() => void)[] = [];
afterEach(() => {
  while (restores.length) restores.pop()!();
});
function change<T extends object, K extends keyof T>(target: T, key: K, value: T[K]): void {
  const before = target[key];
  (target as any)[key] = value;
  restores.push(() => ((target as any)[key] = before));
}

const tableReplicas = (t: CfnTemplate) =>
  Object.entries(t.Resources)
    .filter(([, r]) => r.Type === 'AWS::DynamoDB::GlobalTable')
    .map(([id, r]) => ({ id, policy: r.DeletionPolicy, replicas: (r.Properties as any).Replicas as any[] }));

describe('a failed first deploy leaves a stack the same command deploys again', () => {
  // The CDK CLI turns termination protection on before it executes a new stack's change set and, on the retry,
  // deletes the ROLLBACK_COMPLETE stack first (refused while protected). A create that rolls back deletes what it
  // created under Delete and RetainExceptOnCreate, which DynamoDB refuses for a table with deletion protection
  // (ROLLBACK_FAILED). So a first deploy's template may have neither.
  const canRollBackItsCreate = (app: App, stack: string, t: CfnTemplate): string[] => [
    ...(app.app.synth().getStackByName(stack).terminationProtection ? [`${stack}: termination protection`] : []),
    ...tableReplicas(t)
      .filter((x) => x.policy !== 'Retain' && x.replicas.some((r) => r.DeletionProtectionEnabled))
      .map((x) => `${x.id}: deletion protection on a table its rollback must delete`),
  ];

  it.each(STAGE_NAMES)('%s: the first deploy (-c animal-store:<stage>:firstDeploy=true) can roll back', (stage) => {
    const first = synth({ [firstDeployContextKey(stage)]: 'true' });
    expect(canRollBackItsCreate(first, STAGES[stage].stackName, templatesOf(first)[stage])).toEqual([]);
    // Said on synth, so nobody leaves the switch on.
    expect(
      Annotations.fromStack(first.stacks[stage])
        .findWarning('*', Match.stringLikeRegexp('firstDeploy=true'))
        .map((m) => String(m.entry.data)),
    ).toHaveLength(1);
  });

  it('every later deploy of production turns both protections on, as updates that replace nothing', () => {
    const stage = 'production';
    const first = templatesOf(synth({ [firstDeployContextKey(stage)]: 'true' }))[stage];
    expect(currentApp.app.synth().getStackByName(STAGES[stage].stackName).terminationProtection).toBe(true);
    for (const t of tableReplicas(current[stage]))
      expect(
        t.replicas.every((r) => r.DeletionProtectionEnabled === true),
        t.id,
      ).toBe(true);
    expect(updateFindings(first, current[stage])).toEqual([]);
  });

  it('the account stack too: protected, except on its first deploy', () => {
    const first = synth({ [firstDeployContextKey('account')]: 'true' }).app.synth();
    expect(first.getStackByName(ACCOUNT_SETTINGS_STACK).terminationProtection).toBeFalsy();
    expect(currentApp.app.synth().getStackByName(ACCOUNT_SETTINGS_STACK).terminationProtection).toBe(true);
  });
});

describe('a typical change replaces nothing stateful or fixed-name and updates usage plans one at a time', () => {
  it('a function change (every function of both stages) replaces no stateful or fixed-name resource', () => {
    for (const stage of STAGE_NAMES) change(STAGES, stage, { ...STAGES[stage], logLevel: 'WARN' });
    const next = templatesOf(synth());
    for (const stage of STAGE_NAMES) {
      const changed = Object.entries(next[stage].Resources).filter(
        ([id, r]) =>
          r.Type === 'AWS::Lambda::Function' &&
          JSON.stringify(r.Properties) !== JSON.stringify(current[stage].Resources[id]?.Properties),
      );
      expect(changed.length, stage).toBeGreaterThan(1);
      expect(updateFindings(current[stage], next[stage]), stage).toEqual([]);
    }
  });

  it("raising Free's and Pro's day quotas changes two usage plans, which CloudFormation updates one after the other", () => {
    // (A plan's usage plan carries its keys' limits in its description and tags, so the console shows them.)
    change(PLANS, 'free', { ...PLANS.free, limits: { ...PLANS.free.limits!, perDay: 2_000 } });
    change(PLANS, 'pro', { ...PLANS.pro, limits: { ...PLANS.pro.limits!, perDay: 20_000 } });
    const next = templatesOf(synth());
    for (const stage of STAGE_NAMES) {
      const moved = Object.entries(next[stage].Resources)
        .filter(([id, r]) => JSON.stringify(r.Properties) !== JSON.stringify(current[stage].Resources[id]?.Properties))
        .map(([id]) => id);
      expect(moved, stage).toEqual(expect.arrayContaining(['UsagePlanFree', 'UsagePlanPro']));
      expect(updateFindings(current[stage], next[stage]), stage).toEqual([]);
      expect(unorderedUsagePlans(next[stage]), stage).toEqual([]);
    }
  });

  it('every usage plan of either stage waits for another: one UpdateUsagePlan at a time, whatever changes', () => {
    for (const stage of STAGE_NAMES) {
      expect(
        Object.values(current[stage].Resources).filter((r) => r.Type === 'AWS::ApiGateway::UsagePlan').length,
      ).toBe(PLAN_NAMES.length);
      expect(unorderedUsagePlans(current[stage]), stage).toEqual([]);
    }
  });

  it('renaming the plans only renames them', () => {
    change(PLANS, 'free', { ...PLANS.free, displayName: 'SharedFree' });
    change(PLANS, 'pro', { ...PLANS.pro, displayName: 'Professional' });
    const next = templatesOf(synth());
    for (const stage of STAGE_NAMES) {
      const names = Object.values(next[stage].Resources)
        .filter((r) => r.Type === 'AWS::ApiGateway::UsagePlan')
        .map((r) => String(r.Properties!.UsagePlanName));
      expect(names.some((n) => n.endsWith('-SharedFree')) && names.some((n) => n.endsWith('-Professional'))).toBe(true);
      expect(updateFindings(current[stage], next[stage]), stage).toEqual([]);
    }
  });

  it('the rules name what would be replaced: a key schema, a renamed id, an API key value and what names it', () => {
    const table = declaredTable(TABLES[0]).logicalId;
    const next = structuredClone(current.staging) as any;
    next.Resources[table].Properties.KeySchema[0].AttributeName = 'other';
    next.Resources.CursorSecretRenamed = next.Resources.CursorSecret;
    delete next.Resources.CursorSecret;
    next.Resources.PlanKeyPro.Properties.Value = 'animalstoreanothervalue0000000000';
    const findings = updateFindings(current.staging, next);
    expect(findings).toHaveLength(4);
    expect(findings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^update: CursorSecret \(AWS::SecretsManager::Secret\) leaves the template/),
        expect.stringMatching(/^update: PlanKeyPro \(AWS::ApiGateway::ApiKey\) would be replaced: Value/),
        expect.stringMatching(/^update: PlanKeyProPlan .* KeyId names PlanKeyPro/),
        expect.stringMatching(
          new RegExp(`^update: ${literally(table)} \\(AWS::DynamoDB::GlobalTable\\) would be replaced: KeySchema`),
        ),
      ]),
    );
    const unordered = structuredClone(current.staging) as any;
    delete unordered.Resources.UsagePlanPro.DependsOn;
    // The chain broken after Free: Free is ordered against no other plan.
    const lines = unorderedUsagePlans(unordered);
    expect(lines[0]).toMatch(/UsagePlanFree and UsagePlanPro can be updated at once/);
    expect(lines.every((l) => l.includes('UsagePlanFree and '))).toBe(true);
  });
});

describe("every stage's canary lasts long enough for its gates to fire", () => {
  // CodeDeploy watches the gates only while it shifts: a gate judging one 3-minute period needs that period, the
  // period the shift starts in and CloudWatch's lag before it can be in ALARM.
  const firing = 2 * GATE_PERIOD_SECONDS + CLOUDWATCH_LAG_SECONDS;
  it.each(STAGE_NAMES)('%s', (stage) => {
    const timings = gateTimings(current[stage]);
    expect(timings.length).toBeGreaterThanOrEqual(STAGE_NAMES.length);
    expect(new Set(timings.map((t) => t.secondsToFire))).toEqual(new Set([firing]));
    expect(gatesThatCannotFire(current[stage])).toEqual([]);
  });

  it('a 1-minute canary is refused, naming the gate that could not fire', () => {
    const t = structuredClone(current.staging) as any;
    t.Resources.ShortCanary = {
      Type: 'AWS::CodeDeploy::DeploymentConfig',
      Properties: {
        ComputePlatform: 'Lambda',
        TrafficRoutingConfig: { Type: 'TimeBasedCanary', TimeBasedCanary: { CanaryInterval: 1, CanaryPercentage: 10 } },
      },
    };
    for (const r of Object.values<any>(t.Resources))
      if (r.Type === 'AWS::CodeDeploy::DeploymentGroup') r.Properties.DeploymentConfigName = { Ref: 'ShortCanary' };
    const lines = gatesThatCannotFire(t);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatch(
      new RegExp(`shifts all traffic after 60 s but its gate \\S+ can fire only after ${firing} s`),
    );
  });
});

describe('the account stack comes first', () => {
  it.each(STAGE_NAMES)('%s depends on AnimalStore-account (cdk deploy --all orders it first)', (stage) => {
    const assembly = currentApp.app.synth();
    expect(assembly.getStackByName(STAGES[stage].stackName).dependencies.map((d) => d.id)).toContain(
      ACCOUNT_SETTINGS_STACK,
    );
  });
});

describe("API Gateway's execution log group is the stack's", () => {
  it.each(STAGE_NAMES)('%s: named for the API and stage, with a retention, before the stage', (stage) => {
    const t = current[stage];
    const group = t.Resources.ApiExecutionLogs!;
    expect(group.Type).toBe('AWS::Logs::LogGroup');
    expect(group.Properties!.LogGroupName).toEqual({
      'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: 'RestApi' }, '/v1']],
    });
    expect(group.Properties!.RetentionInDays).toBe(STAGES[stage].logRetention);
    expect(t.Resources.ApiStage!.DependsOn).toContain('ApiExecutionLogs');
    // The stage that writes to it logs errors (so API Gateway would create the group itself).
    expect(JSON.stringify(t.Resources.ApiStage!.Properties!.MethodSettings)).toContain('"LoggingLevel":"ERROR"');
  });
});

describe('the local template is the deployed one', () => {
  // `npm start` and the integration tests serve the template lib/local/synth.ts builds; `cdk synth` passes cdk.json's
  // context (feature flags), which change the access-log destination, the deployment's logical id and DependsOn.
  it("staging's local template matches cdk synth's: access-log destination, deployment id, every DependsOn", async () => {
    const { localAssembly } = await import('../../lib/local/synth.ts');
    const local = (await localAssembly({ stage: 'staging' })).template as unknown as CfnTemplate;
    const deployed = current.staging;
    const stageOf = (t: CfnTemplate) => t.Resources.ApiStage!.Properties!;
    expect(stageOf(local).AccessLogSetting).toEqual(stageOf(deployed).AccessLogSetting);
    expect(stageOf(local).DeploymentId).toEqual(stageOf(deployed).DeploymentId);
    const deployments = (t: CfnTemplate) =>
      Object.keys(t.Resources).filter((id) => t.Resources[id]!.Type === 'AWS::ApiGateway::Deployment');
    expect(deployments(local)).toEqual(deployments(deployed));
    // A version's logical id ends in a hash of its code: the local assembly may be bundled, this synth is not.
    const id = (s: string) => s.replace(/(CurrentVersion[0-9A-F]{8})[0-9a-f]{32}$/, '$1');
    const dependsOn = (t: CfnTemplate) =>
      Object.fromEntries(Object.entries(t.Resources).map(([k, r]) => [id(k), r.DependsOn ?? null]));
    expect(dependsOn(local)).toEqual(dependsOn(deployed));
  });
});

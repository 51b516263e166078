/**
 * Both stages' synthesized templates (bundling skipped, cdk.json's flags, production's required context) and the
 * lookups the stack tests share.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll } from 'vitest';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { tableLogicalIdOf } from '../../lib/constructs/data-tables.ts';
import { sharedTemplate } from './shared-synth.ts';
import { SYNTH_CONTEXT } from './synth-context.ts';

export type Resource = {
  Type: string;
  Properties: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  UpdatePolicy?: Record<string, any>;
  Metadata?: Record<string, any>;
};

let app: ReturnType<typeof createApp> | undefined;
/** The app itself, built on first use: only a test that needs more than the templates (cdk-nag) pays its synth. */
export const built = {
  get app(): ReturnType<typeof createApp> {
    return (app ??= createApp({ context: { ...SYNTH_CONTEXT } }));
  },
};
export const templates = {} as Record<StageName, Template>;

/** Both stages' templates, from the synth the infrastructure tests share (shared-synth.ts). */
export function synthesizeStages(): void {
  beforeAll(() => {
    for (const name of STAGE_NAMES) templates[name] = sharedTemplate(name);
  }, 240_000);
}

/** A stage's resources by logical id, as its synthesized template has them. */
export const resourcesOf = (stage: StageName): Record<string, Resource> => templates[stage].toJSON().Resources;

export const resources = (t: Template, type: string): [string, Resource][] =>
  Object.entries(t.findResources(type)) as [string, Resource][];

/** The logical id of the table built from a definition (pinned from its declaration), checked to be in `t`. */
export const tableLogicalId = (t: Template, defId: string): string => {
  const id = tableLogicalIdOf({ id: defId });
  if (t.toJSON().Resources[id]?.Type !== 'AWS::DynamoDB::GlobalTable') throw new Error(`no table ${defId}`);
  return id;
};

/** The function whose description names the operation, with its role's inline statements. */
export const functionOf = (t: Template, name: string) => {
  const [id, fn] = resources(t, 'AWS::Lambda::Function').find(([, r]) =>
    r.Properties.Description?.endsWith(`: ${name}`),
  )!;
  const roleId = fn.Properties.Role['Fn::GetAtt'][0];
  const policy = resources(t, 'AWS::IAM::Policy').find(([, p]) =>
    p.Properties.Roles.some((r: any) => r.Ref === roleId),
  )!;
  return { id, fn, roleId, statements: policy[1].Properties.PolicyDocument.Statement as any[] };
};

/** One deploy gate: an alarm of a CodeDeploy group, with the function it gates (its description's name) and alias. */
export interface DeployGate {
  readonly fn: string;
  readonly alarmId: string;
  readonly alarm: Record<string, any>;
  readonly alias: Record<string, any>;
}

/** Every alarm of every CodeDeploy group of a stage's template, with the function and alias it shifts. */
export function deployGates(stage: StageName): DeployGate[] {
  const r = resourcesOf(stage);
  return Object.values(r)
    .filter((x) => x.Type === 'AWS::Lambda::Alias')
    .flatMap((alias) => {
      const fn = String(r[alias.Properties.FunctionName.Ref]!.Properties.Description).split(': ').pop()!;
      const group = r[alias.UpdatePolicy!.CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref]!;
      return (group.Properties.AlarmConfiguration.Alarms as { Name: { Ref: string } }[]).map(({ Name }) => ({
        fn,
        alarmId: Name.Ref,
        alarm: r[Name.Ref]!.Properties,
        alias: alias.Properties,
      }));
    });
}

/**
 * Both stages' synthesized templates (bundling skipped, cdk.json's flags, production's required context) and the
 * lookups the stack tests share.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll } from 'vitest';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { tableLogicalIdOf } from '../../lib/constructs/data-tables.ts';
import { SYNTH_CONTEXT } from './synth-context.ts';

export type Resource = {
  Type: string;
  Properties: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  UpdatePolicy?: Record<string, any>;
  Metadata?: Record<string, any>;
};

export const built = { app: undefined as ReturnType<typeof createApp> | undefined };
export const templates = {} as Record<StageName, Template>;

/** Synthesizes both stages once per test file. */
export function synthesizeStages(): void {
  beforeAll(() => {
    built.app = createApp({ context: { ...SYNTH_CONTEXT } });
    for (const name of STAGE_NAMES) templates[name] = Template.fromStack(built.app.stacks[name]);
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

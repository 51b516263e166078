/**
 * Both stages' synthesized templates, as CloudFormation JSON (one in-process synth; bundling skipped, as in
 * stack.test.ts: cli.test.ts synthesizes with real bundling). For tests that read AWS rules off the templates.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { SYNTH_CONTEXT } from './synth-context.ts';

export type Resource = { Type: string; Properties: Record<string, any> };
export type CfnTemplate = { Resources: Record<string, Resource>; Outputs?: Record<string, unknown> };

export function synthTemplates(): Record<StageName, CfnTemplate> {
  const app = createApp({ context: { ...SYNTH_CONTEXT } });
  return Object.fromEntries(
    STAGE_NAMES.map((n) => [n, Template.fromStack(app.stacks[n]).toJSON() as CfnTemplate]),
  ) as Record<StageName, CfnTemplate>;
}

export const resourcesOf = (t: CfnTemplate, type: string): [string, Resource][] =>
  Object.entries(t.Resources).filter(([, r]) => r.Type === type);

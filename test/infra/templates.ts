/**
 * Both stages' synthesized templates, as CloudFormation JSON (the synth the infrastructure tests share, bundling
 * skipped: cli.test.ts synthesizes with real bundling). For tests that read AWS rules off the templates.
 */
import type { StageName } from '../../lib/config/stages.ts';
import { sharedTemplatesJson } from './shared-synth.ts';

export type Resource = { Type: string; Properties: Record<string, any> };
export type CfnTemplate = { Resources: Record<string, Resource>; Outputs?: Record<string, unknown> };

export function synthTemplates(): Record<StageName, CfnTemplate> {
  return sharedTemplatesJson() as Record<StageName, CfnTemplate>;
}

export const resourcesOf = (t: CfnTemplate, type: string): [string, Resource][] =>
  Object.entries(t.Resources).filter(([, r]) => r.Type === type);

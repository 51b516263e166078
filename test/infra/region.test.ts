/**
 * Region and account at synth time. The CDK CLI sets CDK_DEFAULT_REGION to us-east-1 when no region is configured
 * (and CDK_DEFAULT_ACCOUNT only when it finds credentials); a stack that took those would bake us-east-1 into every
 * ARN and URL, then deploy there whatever the operator's profile says. The stacks stay environment-agnostic
 * (AWS::Region / AWS::AccountId, resolved by CloudFormation where they are deployed) unless a stage is pinned on
 * purpose with context.
 */
import { Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const saved = { ...process.env };
beforeAll(() => {
  // What `cdk synth` without a configured region passes to the app.
  process.env.CDK_DEFAULT_REGION = 'us-east-1';
  process.env.CDK_DEFAULT_ACCOUNT = '111111111111';
});
afterAll(() => {
  process.env = { ...saved };
});

async function synth(context: Record<string, string> = {}) {
  // Imported after the environment is set: the stage settings are read at import.
  const { createApp } = await import('../../lib/stacks/app.ts');
  return createApp({ context: { 'aws:cdk:bundling-stacks': [], ...context } }).stacks;
}

describe('synth-time region and account', () => {
  it('leaves both stacks environment-agnostic when nothing is pinned: no us-east-1 or CLI account in the template', async () => {
    const stacks = await synth();
    for (const stack of Object.values(stacks)) {
      expect(Token.isUnresolved(stack.region), `${stack.stackName} region`).toBe(true);
      expect(Token.isUnresolved(stack.account), `${stack.stackName} account`).toBe(true);
      const json = JSON.stringify(Template.fromStack(stack).toJSON());
      expect(json).not.toContain('us-east-1');
      expect(json).not.toContain('111111111111');
      // ARNs and the URL take the region from CloudFormation at deploy time.
      expect(json).toContain('{"Ref":"AWS::Region"}');
    }
  }, 240_000);

  it('pins a stage to the region and account given as context, and only that stage', async () => {
    const stacks = await synth({
      'animal-store:production:region': 'eu-west-1',
      'animal-store:production:account': '123456789012',
    });
    expect(stacks.production.region).toBe('eu-west-1');
    expect(stacks.production.account).toBe('123456789012');
    const url = Template.fromStack(stacks.production).toJSON().Outputs.ApiUrl.Value;
    expect(JSON.stringify(url)).toContain('.execute-api.eu-west-1.');
    expect(Token.isUnresolved(stacks.staging.region)).toBe(true);
  }, 240_000);
});

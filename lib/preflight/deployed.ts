/**
 * The deployed stack as CloudFormation describes it: status, termination protection and, where the stack holds a
 * deployed template (a settled create or update), that template as `cdk diff` compares with it.
 */
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { isDeployed, type StackState } from './stack-status.ts';
import type { CfnTemplate } from './template.ts';

/** What the deployed stack is, as far as this machine can see. */
export type DeployedStack =
  | { readonly state: 'unknown'; readonly why: string }
  | { readonly state: 'absent' }
  | {
      readonly state: 'present';
      readonly status: string;
      readonly terminationProtection: boolean;
      /** Only for a settled stack (CREATE_COMPLETE, UPDATE_COMPLETE, UPDATE_ROLLBACK_COMPLETE…). */
      readonly template?: CfnTemplate;
    };

/** The CloudFormation calls preflight makes: a client, or a stand-in for one in tests. */
export type CloudFormationSend = Pick<CloudFormationClient, 'send'>;

/** DescribeStacks, then GetTemplate where the stack is settled. */
export async function readDeployedStack(cfn: CloudFormationSend, stackName: string): Promise<DeployedStack> {
  const { DescribeStacksCommand, GetTemplateCommand } = await import('@aws-sdk/client-cloudformation');
  let described;
  try {
    described = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
  } catch (e) {
    // CloudFormation answers a ValidationError "Stack with id … does not exist" for a stack it has no record of.
    if (/does not exist/.test((e as Error).message)) return { state: 'absent' };
    throw e;
  }
  const stack = described.Stacks?.[0];
  if (!stack?.StackStatus) return { state: 'absent' };
  const state: StackState = {
    state: 'present',
    status: stack.StackStatus,
    terminationProtection: stack.EnableTerminationProtection === true,
  };
  if (!isDeployed(state)) return state;
  const got = await cfn.send(new GetTemplateCommand({ StackName: stackName, TemplateStage: 'Original' }));
  return { ...state, template: JSON.parse(got.TemplateBody ?? '{"Resources":{}}') };
}

/** The deployed stack through CloudFormation, with this machine's AWS credentials (none: unknown, not a finding). */
export async function deployedStack(stackName: string): Promise<DeployedStack> {
  const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
  const client = new CloudFormationClient({});
  try {
    await client.config.credentials();
    await client.config.region();
  } catch (e) {
    client.destroy();
    return { state: 'unknown', why: `no AWS credentials or region (${(e as Error).message.split('\n')[0]})` };
  }
  try {
    return await readDeployedStack(client, stackName);
  } finally {
    client.destroy();
  }
}

/**
 * The deployed stack as CloudFormation describes it: status, termination protection and, where the stack holds a
 * deployed template (a settled create or update), that template as `cdk diff` compares with it.
 */
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { isDeployed, isWalkBackStatus, type PresentStack, type StackState, type StackTables } from './stack-status.ts';
import { tablesStillProtected, type DynamoDBSend } from './stack-tables.ts';
import type { CfnTemplate } from './template.ts';

/** What the deployed stack is, as far as this machine can see. */
export type DeployedStack =
  | { readonly state: 'unknown'; readonly why: string }
  | { readonly state: 'absent' }
  | (PresentStack & {
      /** Only for a settled stack (CREATE_COMPLETE, UPDATE_COMPLETE, UPDATE_ROLLBACK_COMPLETE…). */
      readonly template?: CfnTemplate;
    });

/** The CloudFormation calls preflight makes: a client, or a stand-in for one in tests. */
export type CloudFormationSend = Pick<CloudFormationClient, 'send'>;

/** The stack's status and termination protection (DescribeStacks). */
export async function readStackState(cfn: CloudFormationSend, stackName: string): Promise<StackState> {
  const { DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
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
  return {
    state: 'present',
    status: stack.StackStatus,
    terminationProtection: stack.EnableTerminationProtection === true,
  };
}

/**
 * DescribeStacks, then GetTemplate where the stack is settled, or (given a DynamoDB client) the tables still
 * protected where the walk-back is the step: a failed read of those is said in the finding, not a failure.
 */
export async function readDeployedStack(
  cfn: CloudFormationSend,
  stackName: string,
  ddb?: DynamoDBSend,
): Promise<DeployedStack> {
  const { GetTemplateCommand } = await import('@aws-sdk/client-cloudformation');
  const state = await readStackState(cfn, stackName);
  if (state.state === 'absent') return state;
  if (ddb && isWalkBackStatus(state.status)) {
    const tables: StackTables = await tablesStillProtected(cfn, ddb, stackName).then(
      (protectedOn) => ({ protectedOn }),
      (e: Error) => ({ unreadable: `${e.name}: ${e.message.split('\n')[0]}` }),
    );
    return { ...state, tables };
  }
  if (!isDeployed(state)) return state;
  const got = await cfn.send(new GetTemplateCommand({ StackName: stackName, TemplateStage: 'Original' }));
  return { ...state, template: JSON.parse(got.TemplateBody ?? '{"Resources":{}}') };
}

/** What keeps an SDK client from calling AWS: no credentials or no region (undefined: nothing). */
export async function credentialsProblem(client: CloudFormationClient): Promise<string | undefined> {
  try {
    await client.config.credentials();
    await client.config.region();
    return undefined;
  } catch (e) {
    return `no AWS credentials or region (${(e as Error).message.split('\n')[0]})`;
  }
}

/** Why this machine cannot call AWS (no credentials or region), with a client made and closed for the question. */
export async function machineCredentialsProblem(): Promise<string | undefined> {
  const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
  const probe = new CloudFormationClient({});
  try {
    return await credentialsProblem(probe);
  } finally {
    probe.destroy();
  }
}

/** The deployed stack through CloudFormation, with this machine's AWS credentials (none: unknown, not a finding). */
export async function deployedStack(stackName: string): Promise<DeployedStack> {
  const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const client = new CloudFormationClient({});
  const why = await credentialsProblem(client);
  if (why) return (client.destroy(), { state: 'unknown', why });
  const ddb = new DynamoDBClient({ region: await client.config.region() });
  try {
    return await readDeployedStack(client, stackName, ddb);
  } finally {
    client.destroy();
    ddb.destroy();
  }
}

/**
 * `npm run walk-back -- --stage <stage|account> [-c key=value]…`: the walk-back of a failed first deploy
 * (lib/preflight/walk-back.ts) with this machine's AWS credentials. The `-c` values are the deploy's (preflight names
 * the command with them): the deploy printed at the end carries them, and `…:region=` picks the stack's Region.
 */
import { parseCommandLine } from '../command-line.ts';
import { STAGE_NAMES, type StageName } from '../config/stage-names.ts';
import { credentialsProblem } from './deployed.ts';
import { contextArgs, contextOf } from './context-words.ts';
import { firstDeployCommand, walkBackCommand } from './stack-status.ts';
import { STEP_FAILED, walkBack, type WalkBackTarget } from './walk-back.ts';

const NAMES = [...STAGE_NAMES, 'account'] as const;

export const USAGE = `Usage: npm run walk-back -- --stage <${NAMES.join('|')}> [-c key=value]...
  Walks back a stack whose first deploy failed (ROLLBACK_COMPLETE, ROLLBACK_FAILED, CREATE_FAILED, DELETE_FAILED):
  each table it left loses its deletion protection and is deleted, termination protection goes off, the stack is
  deleted. Any other status is refused. After a failed step, the same command finishes the walk-back.
  --stage      the stage whose stack it is (AnimalStore-<stage>), or account for AnimalStore-account
  -c           context, as for cdk deploy: named in the deploy printed at the end; …:region= picks the Region`;

/**
 * What the walk-back of `name` (a stage, or account) with the deploy's context works on and names: its stack, the
 * command itself (as preflight names it), the first deploy that follows, and the stack's Region where one is pinned.
 */
export async function walkBackTarget(
  name: string,
  context: Readonly<Record<string, string>>,
): Promise<WalkBackTarget & { region?: string }> {
  const { firstDeployContextKey } = await import('../stacks/first-deploy.ts');
  const { STAGES } = await import('../config/stages.ts');
  const { ACCOUNT_SETTINGS_STACK } = await import('../stacks/account-settings-stack.ts');
  const key = firstDeployContextKey(name);
  const args = contextArgs(context, key);
  const stage = name === 'account' ? undefined : STAGES[name as StageName];
  const stackName = stage?.stackName ?? ACCOUNT_SETTINGS_STACK;
  return {
    stackName,
    command: walkBackCommand(name, args),
    deploy: firstDeployCommand(stackName, args, key),
    region: context[`animal-store:${name}:region`] ?? stage?.region,
  };
}

/** The command line: 0 walked back (or already), 1 a step failed or no credentials, 2 bad usage or refused. */
export async function main(argv: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const parsed = parseCommandLine(
    argv,
    { stage: { type: 'string' }, context: { type: 'string', short: 'c', multiple: true } },
    USAGE,
    out,
    err,
  );
  if ('exit' in parsed) return parsed.exit;
  const name = parsed.values.stage ?? '';
  if (!(NAMES as readonly string[]).includes(name))
    return (err(`error: --stage must be one of ${NAMES.join(', ')}\n${USAGE}`), 2);
  const context = contextOf(parsed.values.context ?? []);
  if (typeof context === 'string') return (err(`error: ${context}\n${USAGE}`), 2);
  const { stackName, command, deploy, region } = await walkBackTarget(name, context);
  const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const cfn = new CloudFormationClient(region ? { region } : {});
  const why = await credentialsProblem(cfn);
  if (why) {
    cfn.destroy();
    err(`walk-back ${stackName}: ${why}: nothing done; with credentials for the stack's account, run: ${command}`);
    return STEP_FAILED;
  }
  const ddb = new DynamoDBClient({ region: await cfn.config.region() });
  try {
    return await walkBack({ stackName, command, deploy }, { cfn, ddb, out });
  } finally {
    cfn.destroy();
    ddb.destroy();
  }
}

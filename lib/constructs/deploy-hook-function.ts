import { CfnResource, Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { ILogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { FUNCTION_RUNTIME } from '../config/function-runtime.ts';
import { functionBundling } from './api-function.ts';
import { pinLogicalId } from './logical-ids.ts';
import { ownedLogGroup } from './owned-log-group.ts';
import { servicePrincipalOf } from './service-principal.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What both deploy hooks (the pre-traffic check, the bake) are built of, under the construct that makes them. */
export interface DeployHookProps {
  /** The log group's pinned logical id (kept on delete: no refactor may orphan it). */
  readonly logsId: string;
  readonly roleDescription: string;
  /** The entry module, relative to the project root (`lambdas/hooks/…-entry.ts`). */
  readonly entry: string;
  readonly description: string;
  readonly environment: Readonly<Record<string, string>>;
  /** Lambda's asynchronous retries. @default Lambda's (2) */
  readonly retryAttempts?: number;
  readonly logRetention?: RetentionDays;
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * A deploy hook's log group (`Logs`), role (`Role`, allowed to write that log group) and function (`Function`,
 * Lambda's longest timeout: CodeDeploy waits up to an hour for the report). The function does not wait for its
 * role's policy: the policy names the deployment groups, which wait for CodeDeploy's role policy, which names the
 * function (a cycle). What must wait for the policy is a deployment, and each starts with its alias's update: the
 * aliases wait for it (canary-deployments.ts). The role is a dependency through the function's Role property.
 */
export function deployHook(
  scope: Construct,
  props: DeployHookProps,
): { readonly logGroup: ILogGroup; readonly role: Role; readonly function: NodejsFunction } {
  const logGroup = ownedLogGroup(scope, 'Logs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
  pinLogicalId(logGroup, props.logsId);
  const role = new Role(scope, 'Role', {
    assumedBy: servicePrincipalOf(scope, 'lambda.amazonaws.com'),
    description: props.roleDescription,
  });
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'WriteItsLogs',
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  const fn = new NodejsFunction(scope, 'Function', {
    role,
    entry: `${PROJECT_ROOT}${props.entry}`,
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
    handler: 'handler',
    description: props.description,
    runtime: Runtime.NODEJS_24_X,
    architecture: Architecture.ARM_64,
    memorySize: FUNCTION_RUNTIME.memoryMb,
    timeout: Duration.minutes(15),
    ...(props.retryAttempts === undefined ? {} : { retryAttempts: props.retryAttempts }),
    logGroup,
    environment: { NODE_OPTIONS: FUNCTION_RUNTIME.nodeOptions, ...props.environment },
    bundling: functionBundling(),
  });
  (fn.node.defaultChild as CfnResource).addDeletionOverride('DependsOn');
  return { logGroup, role, function: fn };
}

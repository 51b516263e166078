import { CfnResource, Duration, Stack, type RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, Role, type Policy } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { FUNCTION_RUNTIME } from '../config/function-runtime.ts';
import { functionBundling } from './api-function.ts';
import { pinLogicalId } from './logical-ids.ts';
import { ownedLogGroup } from './owned-log-group.ts';
import { servicePrincipalOf } from './service-principal.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What the stack gives either deploy hook. */
export interface DeployHookOptions {
  readonly logRetention?: RetentionDays;
  readonly removalPolicy?: RemovalPolicy;
}

/** What each deploy hook (the pre-traffic check, the bake) says of itself. */
export interface DeployHookSpec {
  /** The log group's pinned logical id (kept on delete: no refactor may orphan it). */
  readonly logsId: string;
  readonly roleDescription: string;
  /** The entry module, relative to the project root (`lambdas/hooks/…-entry.ts`). */
  readonly entry: string;
  readonly description: string;
  /** The environment variable that holds the hook's configuration, as JSON. */
  readonly configVariable: string;
  /** The functions the hook judges, by name: the configuration's `functions`, as `[functionName, name]` pairs. */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** The rest of the configuration, after `functions`. */
  readonly config: Readonly<Record<string, unknown>>;
  /** Lambda's asynchronous retries. @default Lambda's (2) */
  readonly retryAttempts?: number;
}

/**
 * A deploy hook's log group (`Logs`), role (`Role`, allowed to write that log group) and function (`Function`,
 * Lambda's longest timeout: CodeDeploy waits up to an hour for the report). The function does not wait for its
 * role's policy: the policy names the deployment groups, which wait for CodeDeploy's role policy, which names the
 * function (a cycle). What must wait for the policy is a deployment, and each starts with its alias's update: the
 * aliases wait for it (canary-deployments.ts). The role is a dependency through the function's Role property.
 */
export abstract class DeployHook extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;
  /** The role's policy: a deployment must not start before it is attached. */
  readonly policy: Policy;

  protected constructor(scope: Construct, id: string, options: DeployHookOptions, spec: DeployHookSpec) {
    super(scope, id);
    const logGroup = ownedLogGroup(this, 'Logs', {
      retention: options.logRetention,
      removalPolicy: options.removalPolicy,
    });
    pinLogicalId(logGroup, spec.logsId);
    const role = new Role(this, 'Role', {
      assumedBy: servicePrincipalOf(this, 'lambda.amazonaws.com'),
      description: spec.roleDescription,
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'WriteItsLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    const config = {
      functions: [...spec.functions].map(([name, f]) => [f.functionName, name]),
      ...spec.config,
    };
    const fn = new NodejsFunction(this, 'Function', {
      role,
      entry: `${PROJECT_ROOT}${spec.entry}`,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      handler: 'handler',
      description: spec.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: FUNCTION_RUNTIME.memoryMb,
      timeout: Duration.minutes(15),
      ...(spec.retryAttempts === undefined ? {} : { retryAttempts: spec.retryAttempts }),
      logGroup,
      environment: {
        NODE_OPTIONS: FUNCTION_RUNTIME.nodeOptions,
        [spec.configVariable]: Stack.of(this).toJsonString(config),
      },
      bundling: functionBundling(),
    });
    (fn.node.defaultChild as CfnResource).addDeletionOverride('DependsOn');
    this.role = role;
    this.function = fn;
    this.policy = role.node.findChild('DefaultPolicy') as Policy;
  }
}

import { CfnResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ILambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { PolicyStatement, Role, type Policy } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { functionBundling } from './api-function.ts';
import { FUNCTION_RUNTIME } from '../config/function-runtime.ts';
import { pinLogicalId } from './logical-ids.ts';
import { ownedLogGroup } from './owned-log-group.ts';
import type { CustomMetrics } from './server-error-rate.ts';
import { servicePrincipalOf } from './service-principal.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = fileURLToPath(new URL('../../lambdas/hooks/bake-entry.ts', import.meta.url));

export interface BakeHookProps {
  readonly stage: string;
  /**
   * The functions the bake judges, by operationId: the operations that write (`writes(route)`, contract/routes.ts).
   * Only their deployment groups run it, so only a release that changes a write waits for it.
   */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** Where the functions' per-version `ServerError` counts live. */
  readonly customMetrics: CustomMetrics;
  readonly logRetention?: RetentionDays;
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The bake (lambdas/hooks/bake.ts): the AfterAllowTraffic hook of the writes' deployment groups, one function that
 * reads from the deployment which function and versions it compares. Its role may write its own log group, read
 * metrics (the versions' counts), report a hook's status and invoke itself (to continue past Lambda's 15
 * minutes); `allowDeploymentsOf` adds reading the deployments of the groups that run it. A deployment must not
 * start before `policy` is attached: the lead makes the aliases wait for it, as for the pre-traffic check.
 */
export class BakeHook extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;
  /** The role's policy: a deployment must not start before it is attached. */
  readonly policy: Policy;

  constructor(scope: Construct, id: string, props: BakeHookProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const logGroup = ownedLogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    // Stateful (kept on delete): pinned, so no refactor of the construct tree orphans it.
    pinLogicalId(logGroup, 'BakeLogs');
    const role = new Role(this, 'Role', {
      assumedBy: servicePrincipalOf(this, 'lambda.amazonaws.com'),
      description: `Animal Store ${props.stage}: the bake after each write's deployment shifts`,
    });
    this.role = role;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'WriteItsLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadTheVersionsCounts',
        actions: ['cloudwatch:GetMetricData'],
        resources: ['*'],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReportTheBake',
        actions: ['codedeploy:PutLifecycleEventHookExecutionStatus'],
        resources: ['*'],
      }),
    );
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'cloudwatch:GetMetricData and codedeploy:PutLifecycleEventHookExecutionStatus support no resource-level permissions (Service Authorization Reference: no resource type), so AWS requires Resource "*"; the bake reads counts only, and reports only a hook execution id CodeDeploy hands it.',
    });
    this.function = new NodejsFunction(this, 'Function', {
      role,
      entry: ENTRY,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      handler: 'handler',
      description: `Animal Store ${props.stage}: the bake of a write's new version (CodeDeploy AfterAllowTraffic)`,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: FUNCTION_RUNTIME.memoryMb,
      // Lambda's longest: an invocation looks for 12 minutes (bake.ts BAKE_RUN_MS), then continues in another.
      timeout: Duration.minutes(15),
      // An invocation that failed without reporting is not run again: a second run beside its own continuation
      // would report twice. CodeDeploy fails a hook that never reports (after an hour), which rolls back.
      retryAttempts: 0,
      logGroup,
      environment: {
        NODE_OPTIONS: FUNCTION_RUNTIME.nodeOptions,
        BAKE_CONFIG: stack.toJsonString({
          functions: [...props.functions].map(([operation, f]) => [f.functionName, operation]),
          namespace: props.customMetrics.namespace,
          dimensions: props.customMetrics.dimensions,
        }),
      },
      bundling: functionBundling(),
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ContinueItself',
        actions: ['lambda:InvokeFunction'],
        resources: [this.function.functionArn],
      }),
    );
    // The policy names the function (ContinueItself) and, through allowDeploymentsOf, the deployment groups, which
    // wait for CodeDeploy's role policy, which names this function: the function must not wait for the policy (a
    // cycle). What must wait for it is a deployment: the aliases do. The role is a dependency through Role.
    (this.function.node.defaultChild as CfnResource).addDeletionOverride('DependsOn');
    this.policy = role.node.findChild('DefaultPolicy') as Policy;
  }

  /** Lets the bake read the deployments of these groups (GetDeployment is authorized on the deployment group). */
  allowDeploymentsOf(groups: Iterable<ILambdaDeploymentGroup>): void {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadTheWritesDeployments',
        actions: ['codedeploy:GetDeployment'],
        resources: [...groups].map((g) => g.deploymentGroupArn),
      }),
    );
  }
}

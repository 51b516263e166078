import { Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import type { ILambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { PolicyStatement, type Policy, type Role } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { deployHook } from './deploy-hook-function.ts';
import type { CustomMetrics } from './server-error-rate.ts';

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
    const hook = deployHook(this, {
      logsId: 'BakeLogs',
      roleDescription: `Animal Store ${props.stage}: the bake after each write's deployment shifts`,
      entry: 'lambdas/hooks/bake-entry.ts',
      // An invocation looks for 12 minutes (bake.ts BAKE_RUN_MS), then continues in another.
      description: `Animal Store ${props.stage}: the bake of a write's new version (CodeDeploy AfterAllowTraffic)`,
      environment: {
        BAKE_CONFIG: stack.toJsonString({
          functions: [...props.functions].map(([operation, f]) => [f.functionName, operation]),
          namespace: props.customMetrics.namespace,
          dimensions: props.customMetrics.dimensions,
        }),
      },
      // An invocation that failed without reporting is not run again: a second run beside its own continuation
      // would report twice. CodeDeploy fails a hook that never reports (after an hour), which rolls back.
      retryAttempts: 0,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    const role = hook.role;
    this.role = role;
    this.function = hook.function;
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
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ContinueItself',
        actions: ['lambda:InvokeFunction'],
        resources: [this.function.functionArn],
      }),
    );
    // The policy names the function (ContinueItself): the function does not wait for it (deployHook).
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

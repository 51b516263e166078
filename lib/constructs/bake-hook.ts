import { Validations } from 'aws-cdk-lib';
import type { ILambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { DeployHook, type DeployHookOptions } from './deploy-hook-function.ts';
import type { CustomMetrics } from './server-error-rate.ts';

export interface BakeHookProps extends DeployHookOptions {
  readonly stage: string;
  /**
   * The functions the bake judges, by operationId: the operations that write (`writes(route)`, contract/routes.ts).
   * Only their deployment groups run it, so only a release that changes a write waits for it.
   */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** Where the functions' per-version `ServerError` counts live. */
  readonly customMetrics: CustomMetrics;
}

/**
 * The bake (lambdas/hooks/bake.ts): the AfterAllowTraffic hook of the writes' deployment groups, one function that
 * reads from the deployment which function and versions it compares. Its role may write its own log group, read
 * metrics (the versions' counts), report a hook's status and invoke itself (to continue past Lambda's 15
 * minutes); `allowDeploymentsOf` adds reading the deployments of the groups that run it. A deployment must not
 * start before `policy` is attached: the lead makes the aliases wait for it, as for the pre-traffic check.
 */
export class BakeHook extends DeployHook {
  constructor(scope: Construct, id: string, props: BakeHookProps) {
    super(scope, id, props, {
      logsId: 'BakeLogs',
      roleDescription: `Animal Store ${props.stage}: the bake after each write's deployment shifts`,
      entry: 'lambdas/hooks/bake-entry.ts',
      // An invocation looks for 12 minutes (bake.ts BAKE_RUN_MS), then continues in another.
      description: `Animal Store ${props.stage}: the bake of a write's new version (CodeDeploy AfterAllowTraffic)`,
      configVariable: 'BAKE_CONFIG',
      functions: props.functions,
      config: { namespace: props.customMetrics.namespace, dimensions: props.customMetrics.dimensions },
      // An invocation that failed without reporting is not run again: a second run beside its own continuation
      // would report twice. CodeDeploy fails a hook that never reports (after an hour), which rolls back.
      retryAttempts: 0,
    });
    const role = this.role;
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
    // The policy names the function: the function does not wait for it (DeployHook).
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ContinueItself',
        actions: ['lambda:InvokeFunction'],
        resources: [this.function.functionArn],
      }),
    );
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

import { RemovalPolicy } from 'aws-cdk-lib';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { Construct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';

/**
 * A log group a construct creates for itself (a function's, the API's access log): its retention as the stage says,
 * and kept when the stack lets go of it unless the stage says otherwise (logs outlive a rollback or a teardown).
 */
export function ownedLogGroup(
  scope: Construct,
  id: string,
  opts: { readonly retention?: RetentionDays; readonly removalPolicy?: RemovalPolicy },
): LogGroup {
  return new LogGroup(scope, id, {
    retention: opts.retention ?? RetentionDays.ONE_MONTH,
    removalPolicy: opts.removalPolicy ?? RemovalPolicy.RETAIN,
  });
}

/**
 * The execution log group of a REST API's deployment stage. With a LoggingLevel set, API Gateway writes to
 * `API-Gateway-Execution-Logs_<api id>/<stage>` and creates that group itself when it does not exist: no retention,
 * and left behind by a stack delete. This creates it in the stack first (the stage waits for it), pinned as
 * `ApiExecutionLogs`.
 */
export function executionLogGroup(
  scope: Construct,
  api: RestApi,
  opts: {
    /** The deployment stage's name, as a literal (a Ref to the stage would close a cycle: the stage waits for this). */
    readonly stageName: string;
    readonly retention?: RetentionDays;
    readonly removalPolicy?: RemovalPolicy;
  },
): LogGroup {
  const group = new LogGroup(scope, 'ExecutionLogs', {
    logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${opts.stageName}`,
    retention: opts.retention ?? RetentionDays.ONE_MONTH,
    removalPolicy: opts.removalPolicy ?? RemovalPolicy.RETAIN,
  });
  pinLogicalId(group, 'ApiExecutionLogs');
  api.deploymentStage.node.addDependency(group);
  return group;
}

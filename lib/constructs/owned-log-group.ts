import { RemovalPolicy } from 'aws-cdk-lib';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

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

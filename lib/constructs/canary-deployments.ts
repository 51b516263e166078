import { Duration, Validations } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, TreatMissingData, type IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaApplication, LambdaDeploymentGroup, type ILambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { serverErrorRate as apiServerErrorRate, type CustomMetrics } from './server-error-rate.ts';

export interface CanaryDeploymentsProps {
  /** Each function's `live` alias, by a readable name (operationId, `authorizer`). */
  readonly aliases: ReadonlyMap<string, Alias>;
  /**
   * Functions whose Lambda errors are answers, not failures: a TOKEN authorizer denies by throwing "Unauthorized",
   * so its Errors metric counts every unknown key. They are gated on the API's 5xx rate only.
   * @default - none
   */
  readonly errorsAreAnswers?: readonly string[];
  /** The API whose 5xx rate gates every shift. */
  readonly api: RestApi;
  /** Where the functions' custom metrics live: the 5xx rate leaves out the counted 501s of unspecified operations. */
  readonly customMetrics: CustomMetrics;
  /** How traffic shifts. */
  readonly deploymentConfig: ILambdaDeploymentConfig;
  /** Roll back when the API's 5xx responses reach this percentage of requests in two consecutive minutes. */
  readonly serverErrorRatePercent: number;
  /** Roll back when a function's alias has this many Lambda errors (crashes, timeouts) in one minute. */
  readonly lambdaErrors: number;
}

const MINUTE = Duration.minutes(1);

/**
 * Gradual deploys: one CodeDeploy deployment group per function that shifts its `live` alias to a new version with
 * the given config (e.g. 10 % for 5 minutes, then the rest) and rolls back when one of its alarms fires during the
 * shift, when the deployment fails or when someone stops it. The alarms use 1-minute periods so they can fire
 * within a canary's few minutes; CodeDeploy takes at most 10 alarms per deployment group.
 */
export class CanaryDeployments extends Construct {
  readonly application: LambdaApplication;
  readonly groups: ReadonlyMap<string, LambdaDeploymentGroup>;
  /** The alarms that gate a shift (they also notify like every alarm). */
  readonly alarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: CanaryDeploymentsProps) {
    super(scope, id);
    const application = new LambdaApplication(this, 'Application');
    this.application = application;
    // The accepted form of a guarded ratio: CloudWatch rejects a scalar inside MAX([...]) when the alarm is created.
    const serverErrorRate = new Alarm(this, 'Api5xxRate', {
      alarmDescription: `During a deploy: API 5xx responses >= ${props.serverErrorRatePercent} % of requests in 2 consecutive minutes`,
      metric: apiServerErrorRate(props.api, props.customMetrics, MINUTE),
      threshold: props.serverErrorRatePercent,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const alarms: Alarm[] = [serverErrorRate];
    const groups = new Map<string, LambdaDeploymentGroup>();
    for (const [name, alias] of props.aliases) {
      const gates: IAlarm[] = [serverErrorRate];
      if (!props.errorsAreAnswers?.includes(name)) {
        const errors = new Alarm(this, `${name}Errors`, {
          alarmDescription: `During a deploy: Lambda ${name} (alias ${alias.aliasName}) errors >= ${props.lambdaErrors} in 1 minute`,
          metric: alias.metricErrors({ period: MINUTE, statistic: 'Sum' }),
          threshold: props.lambdaErrors,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        });
        alarms.push(errors);
        gates.push(errors);
      }
      const group = new LambdaDeploymentGroup(this, name, {
        application,
        alias,
        deploymentConfig: props.deploymentConfig,
        alarms: gates,
        autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
      });
      Validations.of(group.role).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
        reason:
          'The service role CodeDeploy needs to shift a Lambda alias and read its alarms; AWS documents this managed policy for Lambda deployment groups, limited to the functions CodeDeploy deploys.',
      });
      groups.set(name, group);
    }
    this.groups = groups;
    this.alarms = alarms;
  }
}

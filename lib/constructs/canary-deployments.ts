import { Annotations, Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  Metric,
  TreatMissingData,
  type IAlarm,
} from 'aws-cdk-lib/aws-cloudwatch';
import {
  LambdaApplication,
  LambdaDeploymentConfig,
  LambdaDeploymentGroup,
  TrafficRouting,
  type ILambdaDeploymentConfig,
} from 'aws-cdk-lib/aws-codedeploy';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';
import { serverErrorRate as apiServerErrorRate, type CustomMetrics } from './server-error-rate.ts';

export interface CanaryDeploymentsProps {
  /** Each function's `live` alias, by a readable name (operationId, `authorizer`). */
  readonly aliases: ReadonlyMap<string, Alias>;
  /**
   * The TOKEN authorizer, by its name in `aliases`. Its Lambda errors are answers, not failures (it denies by
   * throwing "Unauthorized", so Errors counts every unknown key): it is gated on the API's 5xx rate and on how much
   * higher the new version's share of throwing invocations is than the old version's, which catches a version that
   * denies valid keys or fails, while anonymous traffic (forged tokens) raises both versions' shares alike.
   */
  readonly authorizer: string;
  /** The API whose 5xx rate gates every shift. */
  readonly api: RestApi;
  /** Where the functions' custom metrics live: the 5xx rate leaves out the counted 501s of unspecified operations. */
  readonly customMetrics: CustomMetrics;
  /** How traffic shifts: a predefined config, or a TrafficRouting for a custom config of this stack. */
  readonly deploymentConfig: ILambdaDeploymentConfig | TrafficRouting;
  /** Roll back when the API's 5xx responses reach this percentage of requests in two consecutive minutes. */
  readonly serverErrorRatePercent: number;
  /** Roll back when a function's alias has this many Lambda errors (crashes, timeouts) in one minute. */
  readonly lambdaErrors: number;
  /**
   * Roll back an authorizer shift when the new version's share of invocations that denied a key or failed is this
   * many percentage points above the old version's, in two consecutive minutes with at least
   * AUTHORIZER_DENIAL_MIN_INVOCATIONS invocations on each version.
   */
  readonly authorizerDenialRatePercent: number;
  /**
   * Break glass: shift every alias all at once with no alarm gate (the alarms still exist and notify). For the one
   * deploy that must go out while a gate alarm is firing, e.g. the fix for the 5xx incident it reports.
   * @default false
   */
  readonly breakGlass?: boolean;
}

const MINUTE = Duration.minutes(1);
/**
 * Below this many invocations a minute on either version, the authorizer's versions are not compared: at 50 the
 * share of one version moves by about 7 points (one standard deviation) at random when half its callers are denied.
 */
export const AUTHORIZER_DENIAL_MIN_INVOCATIONS = 50;

/**
 * Gradual deploys: one CodeDeploy deployment group per function that shifts its `live` alias to a new version with
 * the given config (e.g. 10 % for 5 minutes, then the rest) and rolls back when one of its alarms fires during the
 * shift, when the deployment fails or when someone stops it. The alarms use 1-minute periods so they can fire
 * within a canary's few minutes; CodeDeploy takes at most 10 alarms per deployment group.
 *
 * CodeDeploy's service role is this construct's own: it may read and move the `live` aliases of this stack and
 * read alarms, nothing else (the AWS managed AWSCodeDeployRoleForLambdaLimited allows lambda:UpdateAlias on every
 * function of the account).
 */
export class CanaryDeployments extends Construct {
  readonly application: LambdaApplication;
  readonly groups: ReadonlyMap<string, LambdaDeploymentGroup>;
  /** The alarms that gate a shift (they also notify like every alarm). */
  readonly alarms: readonly Alarm[];
  readonly role: Role;

  constructor(scope: Construct, id: string, props: CanaryDeploymentsProps) {
    super(scope, id);
    const application = new LambdaApplication(this, 'Application');
    pinLogicalId(application, 'DeployApplication');
    this.application = application;
    const breakGlass = props.breakGlass ?? false;
    if (breakGlass)
      Annotations.of(this).addWarningV2(
        'animal-store:breakGlass',
        'Break glass: every function shifts all at once with no alarm gate. Deploy once, then deploy again without animal-store:breakGlass.',
      );
    const deploymentConfig = breakGlass
      ? LambdaDeploymentConfig.ALL_AT_ONCE
      : props.deploymentConfig instanceof TrafficRouting
        ? new LambdaDeploymentConfig(this, 'Config', { trafficRouting: props.deploymentConfig })
        : props.deploymentConfig;

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

    // CodeDeploy's service role, limited to what a Lambda deployment of this stack does.
    const role = new Role(this, 'ServiceRole', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      description: `${Stack.of(this).stackName}: CodeDeploy shifts the live aliases of this stack`,
    });
    this.role = role;
    // Lambda authorizes each action against a resource of its own type (Service Authorization Reference, "Actions
    // defined by AWS Lambda"; test/infra/iam-authorization.test.ts checks every grant against it): GetAlias and
    // UpdateAlias against the function (unqualified ARN, whatever the alias), GetProvisionedConcurrencyConfig against
    // the alias (qualified ARN). The ARNs are spelled from each function's ARN: a Ref to the alias would close a loop
    // (the alias's UpdatePolicy names the deployment group, which waits for this policy), and CloudFormation refuses a
    // template with a cycle before it creates anything.
    const functions = [...props.aliases.values()];
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ShiftThisStacksLiveAliases',
        actions: ['lambda:GetAlias', 'lambda:UpdateAlias'],
        resources: functions.map((a) => a.version.lambda.functionArn),
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadTheLiveAliasesProvisionedConcurrency',
        actions: ['lambda:GetProvisionedConcurrencyConfig'],
        resources: functions.map((a) => `${a.version.lambda.functionArn}:${a.aliasName}`),
      }),
    );
    const policy = role.node.findChild('DefaultPolicy');

    const groups = new Map<string, LambdaDeploymentGroup>();
    for (const [name, alias] of props.aliases) {
      const gates: IAlarm[] = [serverErrorRate];
      if (name === props.authorizer) {
        const denials = new Alarm(this, `${name}DenialRate`, {
          alarmDescription: `During a deploy: the new authorizer version's share of invocations that denied or failed is ${props.authorizerDenialRatePercent} points or more above the old version's, in 2 consecutive minutes with at least ${AUTHORIZER_DENIAL_MIN_INVOCATIONS} invocations on each`,
          metric: newVersionExcessErrorShare(alias, MINUTE),
          threshold: props.authorizerDenialRatePercent,
          evaluationPeriods: 2,
          datapointsToAlarm: 2,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        });
        alarms.push(denials);
        gates.push(denials);
      } else {
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
        deploymentConfig,
        // An immutable view: the group would otherwise attach AWSCodeDeployRoleForLambdaLimited to it.
        role: role.withoutPolicyUpdates(),
        // Break glass keeps the alarm list (so the next normal deploy changes one flag back) but disables it.
        alarms: gates,
        ignoreAlarmConfiguration: breakGlass,
        autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: !breakGlass },
      });
      // The role's permissions are an inline policy (a separate resource): CloudFormation must attach it before a
      // group can run a deployment, as a managed policy on the role itself would have been. (The role itself is
      // already a dependency through the group's ServiceRoleArn.)
      group.node.addDependency(policy);
      groups.set(name, group);
    }
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ReadTheGateAlarms',
        actions: ['cloudwatch:DescribeAlarms'],
        resources: alarms.map((a) => a.alarmArn),
      }),
    );
    this.groups = groups;
    this.alarms = alarms;
  }
}

/**
 * How many points the share of the authorizer's invocations that threw (denied a key or failed) is higher on the
 * version being deployed than on the version it replaces, per `period`. The authorizer denies by throwing, so Lambda's
 * Errors counts denials; for invocations through an alias, Lambda also publishes Invocations and Errors per
 * `ExecutedVersion` (dimensions FunctionName, Resource, ExecutedVersion). The new version is the one the alias's
 * template names (the alarm is updated before the alias, which waits for its deployment group and so for this
 * alarm); the old version is the alias's total minus the new one. A caller cannot choose the version that answers
 * (CodeDeploy's weights split traffic at random), so anonymous traffic, forged tokens included, raises both shares
 * alike and leaves the difference near 0; a version that denies valid keys or fails raises only its own. Outside a
 * deploy the old version has no invocations, and the gate is not judged.
 */
function newVersionExcessErrorShare(alias: Alias, period: Duration): MathExpression {
  const fn = alias.version.lambda;
  const executed = (metricName: string) =>
    new Metric({
      namespace: 'AWS/Lambda',
      metricName,
      dimensionsMap: {
        FunctionName: fn.functionName,
        Resource: `${fn.functionName}:${alias.aliasName}`,
        ExecutedVersion: alias.version.version,
      },
      period,
      statistic: 'Sum',
    });
  const min = AUTHORIZER_DENIAL_MIN_INVOCATIONS;
  const oldInvocations = '(FILL(allInvocations, 0) - FILL(newInvocations, 0))';
  return new MathExpression({
    expression:
      `IF(FILL(newInvocations, 0) >= ${min} AND ${oldInvocations} >= ${min}, ` +
      `100 * FILL(newErrors, 0) / FILL(newInvocations, 0) - ` +
      `100 * (FILL(allErrors, 0) - FILL(newErrors, 0)) / ${oldInvocations}, 0)`,
    usingMetrics: {
      newInvocations: executed('Invocations'),
      newErrors: executed('Errors'),
      allInvocations: alias.metricInvocations({ period, statistic: 'Sum' }),
      allErrors: alias.metricErrors({ period, statistic: 'Sum' }),
    },
    period,
  });
}

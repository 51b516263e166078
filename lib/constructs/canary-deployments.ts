import { Annotations, Duration, Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData, type IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import {
  LambdaApplication,
  LambdaDeploymentConfig,
  LambdaDeploymentGroup,
  TrafficRouting,
  type ILambdaDeploymentConfig,
} from 'aws-cdk-lib/aws-codedeploy';
import { PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import { servicePrincipalOf } from './service-principal.ts';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';
import type { CustomMetrics } from './server-error-rate.ts';
import { authorizerExcessErrorShare, operationExcessFailureShare } from './version-gates.ts';

export interface CanaryDeploymentsProps {
  /** Each function's `live` alias, by a readable name (operationId, `authorizer`). */
  readonly aliases: ReadonlyMap<string, Alias>;
  /**
   * The TOKEN authorizer, by its name in `aliases`. Its Lambda errors are answers, not failures (it denies by
   * throwing "Unauthorized", so Errors counts every unknown key): it is gated on how much higher the new version's
   * share of throwing invocations is than the old version's, which catches a version that denies valid keys or
   * fails, while anonymous traffic (forged tokens) raises both versions' shares alike.
   */
  readonly authorizer: string;
  /** Where the functions' custom metrics live: an operation's per-version `InternalError` count. */
  readonly customMetrics: CustomMetrics;
  /** How traffic shifts: a predefined config, or a TrafficRouting for a custom config of this stack. */
  readonly deploymentConfig: ILambdaDeploymentConfig | TrafficRouting;
  /**
   * Roll back an operation's shift when the new version's share of invocations that failed (a Lambda error or a 500
   * `internal_error`) is this many percentage points above the old version's in a minute.
   */
  readonly serverErrorRatePercent: number;
  /** ...and the new version failed at least this many times in that minute. */
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

    // No gate reads an API-wide metric (the gateway's 5XXError or Count): anyone's traffic moves those, so a flood
    // of forged tokens during a deploy would roll back every function. Each gate compares its own function's new
    // version with the old one (version-gates.ts); the API's 5xx rate still pages (alarms.ts), it gates nothing.
    const alarms: Alarm[] = [];

    // CodeDeploy's service role, limited to what a Lambda deployment of this stack does.
    const role = new Role(this, 'ServiceRole', {
      assumedBy: servicePrincipalOf(this, 'codedeploy.amazonaws.com'),
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
      const gates: IAlarm[] = [];
      if (name === props.authorizer) {
        const denials = new Alarm(this, `${name}DenialRate`, {
          alarmDescription: `During a deploy: the new authorizer version's share of invocations that denied or failed is ${props.authorizerDenialRatePercent} points or more above the old version's, in 2 consecutive minutes with at least ${AUTHORIZER_DENIAL_MIN_INVOCATIONS} invocations on each`,
          metric: authorizerExcessErrorShare(alias, MINUTE, AUTHORIZER_DENIAL_MIN_INVOCATIONS),
          threshold: props.authorizerDenialRatePercent,
          evaluationPeriods: 2,
          datapointsToAlarm: 2,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        });
        alarms.push(denials);
        gates.push(denials);
      } else {
        // The id stays `<name>Errors`: the gate replaces the alias-errors alarm of that name (its runbook section).
        const failures = new Alarm(this, `${name}Errors`, {
          alarmDescription: `During a deploy: the new version of ${name} failed (Lambda error or 500 internal_error) at least ${props.lambdaErrors} times in 1 minute, on a share of its invocations ${props.serverErrorRatePercent} points or more above the old version's`,
          metric: operationExcessFailureShare(alias, props.customMetrics, name, MINUTE, props.lambdaErrors),
          threshold: props.serverErrorRatePercent,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        });
        alarms.push(failures);
        gates.push(failures);
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

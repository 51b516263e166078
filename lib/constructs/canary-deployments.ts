import { Annotations, Stack, Token, Validations } from 'aws-cdk-lib';
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
import { Function as LambdaFunction, type Alias } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { configNameWeight, routingWeight } from '../preflight/canary-timing.ts';
import { pinLogicalId } from './logical-ids.ts';
import type { BakeHook } from './bake-hook.ts';
import type { PreTrafficHook } from './pre-traffic-hook.ts';
import type { CustomMetrics } from './server-error-rate.ts';
import {
  GATE_MARGIN,
  GATE_MIN_FAILURES,
  GATE_PERIOD,
  GATE_SIGMAS,
  authorizerExcessErrors,
  operationExcessFailures,
} from './version-gates.ts';

export interface CanaryDeploymentsProps {
  /** Each function's `live` alias, by a readable name (operationId, `authorizer`). */
  readonly aliases: ReadonlyMap<string, Alias>;
  /**
   * The TOKEN authorizer, by its name in `aliases`. Its Lambda errors are answers as well as failures (it denies by
   * throwing "Unauthorized", so Errors counts every unknown key): its gate compares the new version's throws with
   * what the old version's share predicts, which catches a version that denies valid keys or fails, while anonymous
   * traffic (forged tokens) is denied by both versions alike.
   */
  readonly authorizer: string;
  /** Where the functions' custom metrics live: an operation's per-version `ServerError` count. */
  readonly customMetrics: CustomMetrics;
  /** How traffic shifts: a predefined config, or a TrafficRouting for a custom config of this stack. */
  readonly deploymentConfig: ILambdaDeploymentConfig | TrafficRouting;
  /**
   * Break glass: shift every alias all at once with no pre-traffic check, no alarm gate and no bake (the alarms
   * still exist and notify). For the one deploy that must go out while the live version is broken: the fix for the
   * incident that makes every check "cannot judge" or a gate fire.
   * @default false
   */
  readonly breakGlass?: boolean;
  /**
   * The pre-traffic check (pre-traffic-hook.ts): each group's BeforeAllowTraffic hook, which judges the new version
   * before any traffic shifts and fails the deployment otherwise. @default - none
   */
  readonly preTrafficHook?: PreTrafficHook;
  /**
   * The bake (bake-hook.ts) and the functions it judges (by name in `aliases`): their groups' AfterAllowTraffic
   * hook, which watches the new version after the shift and fails the deployment (a rollback) when it fails more
   * than the previous one. Only those groups run it, so a release that changes no write waits for nothing.
   * @default - none
   */
  readonly bake?: { readonly hook: BakeHook; readonly functions: ReadonlySet<string> };
}

/**
 * Gradual deploys: one CodeDeploy deployment group per function that shifts its `live` alias to a new version with
 * the given config (e.g. 10 % for 10 minutes, then the rest) and rolls back when its gate fires during the shift,
 * when the deployment fails or when someone stops it. Each gate judges 3-minute buckets of the canary, the longest
 * that can still fire inside it (version-gates.ts); CodeDeploy takes at most 10 alarms per deployment group.
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

    // The hook as CDK's groups see it: its role an immutable view, so the grant CDK makes for each group (the report
    // on the group's ARN, which the Service Authorization Reference says the action is not authorized on: it takes
    // only "*") is not written; the hook's own policy has the grant that applies (below).
    // Break glass runs neither hook: an incident in the live version makes both "cannot judge".
    const hook = breakGlass ? undefined : props.preTrafficHook;
    const bake = breakGlass ? undefined : props.bake;
    const bakeView = bake
      ? LambdaFunction.fromFunctionAttributes(this, 'BakeView', {
          functionArn: bake.hook.function.functionArn,
          role: bake.hook.role.withoutPolicyUpdates(),
          sameEnvironment: true,
        })
      : undefined;
    const hookView = hook
      ? LambdaFunction.fromFunctionAttributes(this, 'PreTrafficHookView', {
          functionArn: hook.function.functionArn,
          role: hook.role.withoutPolicyUpdates(),
          sameEnvironment: true,
        })
      : undefined;
    const groups = new Map<string, LambdaDeploymentGroup>();
    // The configured canary's, break glass or not: the alarms stay the same whichever way a deploy goes out.
    const weight = canaryWeight(this, props.deploymentConfig);
    for (const [name, alias] of props.aliases) {
      const gates: IAlarm[] = [];
      const test = `by more than ${GATE_SIGMAS} standard deviations of the binomial count expected if both versions failed at the same rate (plus ${GATE_MARGIN}), with at least ${GATE_MIN_FAILURES} failures of the new version, in a ${GATE_PERIOD.toMinutes()}-minute period`;
      // The ids stay `<name>Errors` and `<authorizer>DenialRate`: the runbook's sections are named after them.
      const gate =
        name === props.authorizer
          ? new Alarm(this, `${name}DenialRate`, {
              alarmDescription: `During a deploy: the new authorizer version threw (denied a key or failed) more often than the old version's share predicts, ${test}`,
              metric: authorizerExcessErrors(alias, weight),
              threshold: GATE_MARGIN,
              evaluationPeriods: 1,
              comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
              treatMissingData: TreatMissingData.NOT_BREACHING,
            })
          : new Alarm(this, `${name}Errors`, {
              alarmDescription: `During a deploy: the new version of ${name} failed (a Lambda error, or a 5xx it answered: 500 or 503) more often than the old version's share predicts, ${test}`,
              metric: operationExcessFailures(alias, props.customMetrics, name, weight),
              threshold: GATE_MARGIN,
              evaluationPeriods: 1,
              comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
              treatMissingData: TreatMissingData.NOT_BREACHING,
            });
      alarms.push(gate);
      gates.push(gate);
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
        // Judged before traffic, and watched after the shift when the function writes.
        ...(hookView ? { preHook: hookView } : {}),
        ...(bakeView && bake?.functions.has(name) ? { postHook: bakeView } : {}),
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
    if (hook) {
      // CodeDeploy invokes the hook by its name (unqualified) with this role; the grant CDK would make cannot reach
      // the role's policy (an immutable view above).
      role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'InvokeThePreTrafficHook',
          actions: ['lambda:InvokeFunction'],
          resources: [hook.function.functionArn],
        }),
      );
      // The hook reads which function and version a deployment moves from the deployment itself; GetDeployment is
      // authorized against the deployment group, as the report is.
      hook.role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'ReadThisStacksDeployments',
          actions: ['codedeploy:GetDeployment'],
          resources: [...groups.values()].map((g) => g.deploymentGroupArn),
        }),
      );
      hook.role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'ReportTheCheck',
          actions: ['codedeploy:PutLifecycleEventHookExecutionStatus'],
          resources: ['*'],
        }),
      );
      Validations.of(hook.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'codedeploy:PutLifecycleEventHookExecutionStatus supports no resource-level permissions (Service Authorization Reference: no resource type), so AWS requires Resource "*"; the call names a deployment and a hook execution id only CodeDeploy hands the hook.',
      });
      // A deployment starts with an alias's update: by then the hook may read and report it.
      for (const alias of props.aliases.values()) alias.node.addDependency(hook.policy);
    }
    if (bake) {
      role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'InvokeTheBake',
          actions: ['lambda:InvokeFunction'],
          resources: [bake.hook.function.functionArn],
        }),
      );
      const baked = [...groups].filter(([name]) => bake.functions.has(name));
      bake.hook.allowDeploymentsOf(baked.map(([, g]) => g));
      for (const [name] of baked) props.aliases.get(name)!.node.addDependency(bake.hook.policy);
    }
    this.groups = groups;
    this.alarms = alarms;
  }
}

/**
 * The new version's least share of the invocations while a config shifts (lib/preflight/canary-timing.ts): the
 * gates' bound never takes its share below it. A predefined config is known by its name only.
 */
function canaryWeight(scope: Construct, config: ILambdaDeploymentConfig | TrafficRouting): number {
  if (config instanceof TrafficRouting) {
    const routing = config.bind(scope);
    return routingWeight({
      type: routing.type,
      canaryPercentage: routing.timeBasedCanary?.canaryPercentage,
      linearPercentage: routing.timeBasedLinear?.linearPercentage,
    });
  }
  if (Token.isUnresolved(config.deploymentConfigName))
    throw new Error(
      'the deployment config must be a predefined one, by name, or a TrafficRouting: its weight is read from it',
    );
  return configNameWeight(config.deploymentConfigName);
}

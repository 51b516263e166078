import { oldKeyFormOf } from '../config/old-key-form.ts';
import { Annotations, CfnOutput, Stack, Validations, type CfnResource, type StackProps } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { Operation } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnPermission, Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { AUTHORIZER, ROUTES, writes } from '../../contract/routes.ts';
import { PLANS } from '../../contract/plans.ts';
import { ERROR_CODES } from '../../contract/errors.ts';
import { alarmNotificationsOf, existingTableNamesOf, type StageConfig } from '../config/stages.ts';
import { planThrottles } from '../config/capacity.ts';
import { TABLES } from '../../contract/tables.ts';
import { AlarmTopic } from '../constructs/alarm-topic.ts';
import { ApiAlarms } from '../constructs/alarms.ts';
import { ApiFunction, LIVE_ALIAS, TELEMETRY } from '../constructs/api-function.ts';
import { CanaryDeployments } from '../constructs/canary-deployments.ts';
import { OperationsDashboard } from '../constructs/dashboard.ts';
import { DataTables, requestUnitCeiling } from '../constructs/data-tables.ts';
import { GatewayRefusals } from '../constructs/gateway-refusals.ts';
import { GatewayResponses } from '../constructs/gateway-responses.ts';
import { STAGE_NAME, StoreApi } from '../constructs/store-api.ts';
import { UsagePlans } from '../constructs/usage-plans.ts';
import { WebFirewall } from '../constructs/web-firewall.ts';
import { pinLogicalId } from '../constructs/logical-ids.ts';
import { accessOf, functionConstructId, tableEnvironment, tableOperations } from './function-access.ts';
import { OUTPUT_IDS, USAGE_KEYS_PER_PLAN, tableNameOutputId, usagePlanOutputId } from './outputs.ts';
import { DEPLOY_HOOK_METADATA, FUNCTION_METADATA, TABLE_METADATA } from './metadata.ts';
import { PreTrafficHook } from '../constructs/pre-traffic-hook.ts';
import { BakeHook } from '../constructs/bake-hook.ts';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import { writeLambdaEntry } from '../config/lambda-entries.ts';
import { BREAK_GLASS_CONTEXT, breakGlassOf, breakGlassRefusal } from './break-glass.ts';

export interface AnimalStoreStackProps extends StackProps {
  readonly stage: StageConfig;
}

export { BREAK_GLASS_CONTEXT } from './break-glass.ts';

/**
 * One stage of the Animal Store: tables, functions, the REST API (stage v1) behind a WAF web ACL, usage plans,
 * alarms and their topic, gradual deploys, outputs.
 */
export class AnimalStoreStack extends Stack {
  constructor(scope: Construct, id: string, props: AnimalStoreStackProps) {
    super(scope, id, props);
    const { stage } = props;

    const data = new DataTables(this, 'Data', {
      removalPolicy: stage.removalPolicy,
      deletionProtection: stage.deletionProtection,
      maxRequestUnitsPerSecond: requestUnitCeiling(stage.stageThrottle, ROUTES.length),
      existingTableNames: existingTableNamesOf(
        stage,
        TABLES.map((d) => d.id),
        (key) => this.node.tryGetContext(key),
      ),
    });
    // Lets the local gateway name each table of the template locally (lib/local).
    for (const { def, table } of data.entries())
      (table.node.defaultChild as CfnResource | undefined)?.addMetadata(TABLE_METADATA, def.id);

    const cursorSecret = new Secret(this, 'CursorSecret', {
      description: `Animal Store ${stage.name}: signs pagination cursors`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: stage.removalPolicy,
    });
    pinLogicalId(cursorSecret, 'CursorSecret');
    Validations.of(cursorSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The cursor signing key only makes pagination cursors tamper-evident; an automatic rotation needs a rotation function for little gain. It is rotated by hand, staged so that no cursor in flight breaks (docs/deployment.md, "Rotating the cursor secret").',
    });

    const functionFor = (name: string): ApiFunction => {
      const access = accessOf(name);
      const fn = new ApiFunction(this, functionConstructId(name), {
        // Generated from the route table: no entry file per function in the repository.
        entry: writeLambdaEntry({ name, access }),
        operationId: name,
        stage: stage.name,
        logLevel: stage.logLevel,
        logRetention: stage.logRetention,
        removalPolicy: stage.removalPolicy,
        // The authorizer runs for every cache miss, so for every random token of a flood: capped, so it cannot take
        // the account's concurrency from the operations, and guaranteed, so the operations cannot starve it.
        ...(name === AUTHORIZER.name ? { reservedConcurrentExecutions: stage.authorizerReservedConcurrency } : {}),
        environment: {
          ...tableEnvironment(access, (def) => data.table(def).tableName),
          CORS_ALLOWED_ORIGINS: stage.corsAllowedOrigins.join(','),
          // The ARN, never the value: the function reads the secret at cold start (lambdas/shared/cursor-keys.ts),
          // so the value is not in its configuration and a rotation needs no deploy.
          ...(access.cursorSecret ? { CURSOR_SECRET_ARN: cursorSecret.secretArn } : {}),
          // The stage the plans' API keys are named for: the authorizer names them to the gateway. STAGE says the same in AWS; a local run sets STAGE=local for its logs and
          // keeps this, so the authorizer names the keys the local gateway reads from this template.
          ...(name === AUTHORIZER.name
            ? {
                USAGE_KEYS_STAGE: stage.name,
                OLD_KEY_FORM: oldKeyFormOf(stage.name, (k) => this.node.tryGetContext(k)),
              }
            : {}),
        },
      });
      // Lets the local gateway build this function from its handler factory (lib/local).
      (fn.function.node.defaultChild as CfnResource).addMetadata(FUNCTION_METADATA, name);
      pinLogicalId(fn.logGroup, `${fn.node.id}Logs`);
      for (const grant of access.tables) {
        const arn = data.table(grant.table).tableArn;
        fn.function.addToRolePolicy(
          new PolicyStatement({
            actions: [...grant.actions],
            resources: [grant.index ? `${arn}/index/${grant.index}` : arn],
          }),
        );
      }
      // Only the read of its one secret: no DescribeSecret or ListSecretVersionIds (grantRead's), no other secret.
      if (access.cursorSecret)
        fn.function.addToRolePolicy(
          new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [cursorSecret.secretArn] }),
        );
      return fn;
    };

    const functions = new Map<string, ApiFunction>(ROUTES.map((r) => [r.operationId, functionFor(r.operationId)]));
    functions.set(AUTHORIZER.name, functionFor(AUTHORIZER.name));
    const handlers = new Map(ROUTES.map((r) => [r.operationId, functions.get(r.operationId)!.function]));
    const authorizerHandler = functions.get(AUTHORIZER.name)!.function;

    // The functions' default metric dimensions (lambdas/shared/observability.ts): SERVICE_NAME's service, and STAGE.
    const customMetrics = {
      namespace: TELEMETRY.metricsNamespace,
      dimensions: { service: TELEMETRY.serviceName, stage: stage.name },
    };
    // The authorizer's alias moves to a new version only once the plans' API keys it names exist (below), and the
    // usage plans come after the stage, which comes after the authorizer: so API Gateway's authorizer names the
    // alias by its ARN, not by a reference to the alias resource, or the template would be circular.
    const authorizer = functions.get(AUTHORIZER.name)!;
    const authorizerLive = LambdaFunction.fromFunctionAttributes(this, 'AuthorizerLiveArn', {
      functionArn: `${authorizer.function.functionArn}:${LIVE_ALIAS}`,
      sameEnvironment: true,
    });
    const store = new StoreApi(this, 'Api', {
      // API Gateway invokes the `live` aliases (the permissions are granted on them), so deploys can shift traffic.
      handlers: new Map(ROUTES.map((r) => [r.operationId, functions.get(r.operationId)!.alias])),
      authorizerHandler: authorizerLive,
      authorizerCacheTtl: stage.authorizerCacheTtl,
      accessLogRetention: stage.accessLogRetention,
      executionLogRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
      customDomain: stage.customDomain,
      corsAllowedOrigins: stage.corsAllowedOrigins,
      throttle: stage.stageThrottle,
      traceSampleRate: stage.traceSampleRate,
      // Every access-log line carries them, so the gateway's refusals counted from the log share the functions' set.
      accessLogConstants: customMetrics.dimensions,
    });
    new WebFirewall(this, 'Firewall', {
      stage: store.api.deploymentStage,
      requestsPerIpPer5Minutes: stage.wafRequestsPerIpPer5Minutes,
      requestsPerKeyPer5Minutes: stage.wafRequestsPerKeyPer5Minutes,
      listedRequestsPer5Minutes: stage.wafListedRequestsPer5Minutes,
      customerEgress: stage.customerEgress,
      oldKeyForm: oldKeyFormOf(stage.name, (k) => this.node.tryGetContext(k)),
    });
    new GatewayResponses(this, 'GatewayResponses', { api: store.api });
    const usagePlans = new UsagePlans(this, 'UsagePlans', {
      api: store.api,
      namePrefix: stage.stackName,
      stageName: stage.name,
      throttles: planThrottles(stage),
    });
    // A new authorizer version names the plans' API keys: its alias moves to it only once they exist (else 403). The
    // permission to invoke the alias names it by ARN too: it waits for the alias.
    const authorizerAlias = authorizer.alias.node.defaultChild as CfnResource;
    for (const planKey of usagePlans.planKeys) authorizerAlias.addResourceDependency(planKey);
    for (const child of authorizerLive.node.findAll())
      if (child instanceof CfnPermission) child.addResourceDependency(authorizerAlias);

    // API Gateway's own 429s, which no function sees, counted from the access log (the authorizer's Denies apart).
    const gatewayRefusals = new GatewayRefusals(this, 'GatewayRefusals', {
      accessLogs: store.accessLogs,
      customMetrics,
    });
    const used = tableOperations();
    new ApiAlarms(this, 'Alarms', {
      api: store.api,
      functions: new Map([...handlers, [AUTHORIZER.name, authorizerHandler]]),
      // The tables a function uses: one only the admin tool writes (its history of changes) fails in front of the
      // admin, who is told at once; an alarm would bill its metrics to watch no customer's request.
      tables: new Map(data.entries().flatMap(({ def, table }) => (used.has(def.id) ? [[def.id, table] as const] : []))),
      // CDK's Operation values are DynamoDB's operation names.
      tableOperations: used as Map<string, Operation[]>,
      thresholds: stage.alarms,
      customMetrics,
    });
    // Every alarm of the stack, whichever construct made it, notifies the stage's topic on ALARM and on OK.
    const notifications = alarmNotificationsOf(stage, (key) => this.node.tryGetContext(key));
    if (!notifications.topicArn && !notifications.emails?.length) {
      const line = `${stage.stackName}: nobody hears its alarms; set -c animal-store:${stage.name}:alarmEmails=<a@x,b@y> or -c animal-store:${stage.name}:alarmTopicArn=<arn:aws:sns:…>`;
      if (stage.requireAlarmSubscriber) Annotations.of(this).addError(line);
      else Annotations.of(this).addWarningV2('animal-store:alarmSubscriber', line);
    }
    const alarmTopic = new AlarmTopic(this, 'AlarmTopic', {
      ...notifications,
      removalPolicy: stage.removalPolicy,
    });
    alarmTopic.notifyFromEveryAlarmIn(this);

    const glass = breakGlassOf(this.node.tryGetContext(BREAK_GLASS_CONTEXT));
    const refusal = breakGlassRefusal(glass, stage.name, stage.breakGlassNeedsReason);
    if (refusal) Annotations.of(this).addError(`${stage.stackName}: ${refusal}`);
    const breakGlass = glass.on;
    // Each deployment's new version is judged before any traffic shifts: the gates cannot judge low traffic.
    const preTrafficHook = new PreTrafficHook(this, 'PreTrafficCheck', {
      stage: stage.name,
      keysStage: stage.name,
      functions: new Map([...functions].map(([name, fn]) => [name, fn.function])),
      liveAlias: LIVE_ALIAS,
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    (preTrafficHook.function.node.defaultChild as CfnResource).addMetadata(DEPLOY_HOOK_METADATA, 'preTraffic');
    // A write's new version is watched after the shift too: at low traffic its canary sees too few requests.
    const written = new Set(ROUTES.filter(writes).map((r) => r.operationId as string));
    const bake = new BakeHook(this, 'Bake', {
      stage: stage.name,
      functions: new Map([...functions].filter(([name]) => written.has(name)).map(([name, fn]) => [name, fn.function])),
      customMetrics,
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });
    (bake.function.node.defaultChild as CfnResource).addMetadata(DEPLOY_HOOK_METADATA, 'bake');
    const deployments = new CanaryDeployments(this, 'Deploy', {
      aliases: new Map([...functions].map(([name, fn]) => [name, fn.alias])),
      authorizer: AUTHORIZER.name,
      customMetrics,
      deploymentConfig: stage.deploymentConfig,
      breakGlass,
      preTrafficHook,
      bake: { hook: bake, functions: written },
    });

    // Built last: its alarm status widget shows every alarm of the stack, whichever construct made it.
    const dashboard = new OperationsDashboard(this, 'Dashboard', {
      api: store.api,
      operations: handlers,
      authorizer: authorizerHandler,
      tables: new Map(data.entries().map(({ def, table }) => [def.id, table])),
      alarms: this.node.findAll().filter((c): c is Alarm => c instanceof Alarm),
      customMetrics,
      gatewayRefusals: gatewayRefusals.series,
      rateLimitCodes: Object.keys(ERROR_CODES).filter(
        (code) => ERROR_CODES[code as keyof typeof ERROR_CODES].status === 429,
      ),
      plans: Object.keys(PLANS),
      deprecated: ROUTES.flatMap((r) =>
        r.deprecation
          ? [{ operationId: r.operationId, method: r.method, path: r.path, sunsetAt: r.deprecation.sunsetAt }]
          : [],
      ),
    });

    new CfnOutput(this, OUTPUT_IDS.apiUrl, {
      value: `https://${store.api.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${STAGE_NAME}/`,
      description: 'Base URL (ends in /v1/)',
    });
    new CfnOutput(this, OUTPUT_IDS.apiId, { value: store.api.restApiId, description: 'REST API id' });
    if (store.api.domainName) {
      new CfnOutput(this, OUTPUT_IDS.customDomainUrl, {
        value: `https://${store.api.domainName.domainName}/${STAGE_NAME}/`,
        description: 'Base URL on the custom domain',
      });
      new CfnOutput(this, OUTPUT_IDS.customDomainTarget, {
        value: store.api.domainName.domainNameAliasDomainName,
        description: 'DNS alias (CNAME/ALIAS) target of the custom domain',
      });
    }
    for (const { def, table } of data.entries()) {
      new CfnOutput(this, tableNameOutputId(def), {
        value: table.tableName,
        description: `DynamoDB table ${def.id} (${def.envVar})`,
      });
    }
    for (const [name, plan] of usagePlans.plans) {
      new CfnOutput(this, usagePlanOutputId(name), {
        value: plan.usagePlanId,
        description: `Usage plan ${PLANS[name].displayName}`,
      });
    }
    new CfnOutput(this, OUTPUT_IDS.dashboardName, {
      value: dashboard.dashboard.dashboardName,
      description: 'CloudWatch dashboard of the stage',
    });
    new CfnOutput(this, OUTPUT_IDS.alarmTopicArn, {
      value: alarmTopic.topic.topicArn,
      description: 'SNS topic every alarm notifies (ALARM and OK)',
    });
    new CfnOutput(this, OUTPUT_IDS.deployApplicationName, {
      value: deployments.application.applicationName,
      description: 'CodeDeploy application of the gradual deploys',
    });
    new CfnOutput(this, OUTPUT_IDS.cursorSecretArn, {
      value: cursorSecret.secretArn,
      description: 'Secret that signs pagination cursors',
    });
    new CfnOutput(this, OUTPUT_IDS.usageKeys, {
      value: USAGE_KEYS_PER_PLAN,
      description: "The API keys the stage's authorizer names: each plan's one key",
    });
    new CfnOutput(this, OUTPUT_IDS.accountShare, {
      value: String(stage.accountShare),
      description: "The stage's share of the account's API Gateway and Lambda quotas",
    });
    // A lasting record of every break glass: the parameter's history (GetParameterHistory) keeps each value with its
    // date and who deployed it, and a normal deploy only sets it back to `off`. Standard tier: free.
    const record = new StringParameter(this, 'BreakGlassRecord', {
      parameterName: `/${stage.stackName}/break-glass`,
      stringValue: glass.on ? glass.reason || 'no reason given' : 'off',
      description: 'Why the last deploy broke glass (no pre-traffic check, no canary gate, no bake), or off',
    });
    pinLogicalId(record, 'BreakGlassRecord');
    // Only while glass is broken: DescribeStacks shows why this deploy skipped its checks.
    if (glass.on)
      new CfnOutput(this, OUTPUT_IDS.breakGlass, {
        value: glass.reason || 'no reason given',
        description: 'Why the last deploy broke glass: no pre-traffic check, no canary gate, no bake',
      });
  }
}

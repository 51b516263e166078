/**
 * Gradual deploys: every function is invoked through its `live` alias, and both stages shift each alias with a
 * CodeDeploy canary gated on alarms (staging as long as production, so the shifting and the rollback are exercised
 * before production depends on them). Bundling is skipped; cli.test.ts synthesizes with real bundling and cdk-nag.
 */
import { describe, expect, it } from 'vitest';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { LIVE_ALIAS } from '../../lib/constructs/api-function.ts';
import { GATE_MARGIN } from '../../lib/constructs/version-gates.ts';
import { STAGES, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { resourcesOf, synthesizeStages, type Resource } from './stack-fixture.ts';

synthesizeStages();

const ofType = (stage: StageName, type: string): [string, Resource][] =>
  Object.entries(resourcesOf(stage)).filter(([, r]) => r.Type === type);

/** The logical id a value references (`Ref` or `Fn::GetAtt`), searched anywhere inside it. */
const refsIn = (value: unknown): string[] => {
  const text = JSON.stringify(value);
  return [...text.matchAll(/"Ref":"([A-Za-z0-9]+)"|"Fn::GetAtt":\["([A-Za-z0-9]+)"/g)].map((m) => m[1] ?? m[2]!);
};

/** Alias logical id → the operation (or `authorizer`) of its function, read from the function's description. */
const aliasesOf = (stage: StageName): Map<string, string> =>
  new Map(
    ofType(stage, 'AWS::Lambda::Alias').map(([id, alias]) => {
      const fn = resourcesOf(stage)[alias.Properties.FunctionName.Ref]!;
      return [id, String(fn.Properties.Description).split(': ').pop()!];
    }),
  );

const FUNCTIONS = [...ROUTES.map((r) => r.operationId), AUTHORIZER.name].sort();

describe.each(STAGE_NAMES)('stage %s', (stage) => {
  it(`publishes every function as a version behind the alias "${LIVE_ALIAS}"`, () => {
    const aliases = ofType(stage, 'AWS::Lambda::Alias');
    expect([...aliasesOf(stage).values()].sort()).toEqual(FUNCTIONS);
    for (const [, alias] of aliases) {
      expect(alias.Properties.Name).toBe(LIVE_ALIAS);
      // The alias points at the function's own published version (AWS::Lambda::Version of the same function).
      const [versionId] = refsIn(alias.Properties.FunctionVersion);
      const version = resourcesOf(stage)[versionId!]!;
      expect(version.Type).toBe('AWS::Lambda::Version');
      expect(version.Properties.FunctionName).toEqual(alias.Properties.FunctionName);
    }
  });

  it('points every Lambda integration and the authorizer at an alias, and grants invoke on the alias only', () => {
    const aliases = aliasesOf(stage);
    const integrations = ofType(stage, 'AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties.Integration?.Type === 'AWS_PROXY',
    );
    expect(integrations).toHaveLength(ROUTES.length);
    for (const [, method] of integrations) {
      const targets = refsIn(method.Properties.Integration.Uri).filter((id) => aliases.has(id));
      expect(targets.map((id) => aliases.get(id))).toEqual([method.Properties.OperationName]);
      expect(
        refsIn(method.Properties.Integration.Uri).some(
          (id) => resourcesOf(stage)[id]?.Type === 'AWS::Lambda::Function',
        ),
      ).toBe(false);
    }
    // The authorizer names its alias by ARN (the function's and `:live`): the alias waits for the plans' API keys,
    // which wait for the stage, which waits for the authorizer, so a reference to the alias would be a cycle.
    const [[, authorizer]] = ofType(stage, 'AWS::ApiGateway::Authorizer') as [[string, Resource]];
    const uri = JSON.stringify(authorizer.Properties.AuthorizerUri);
    const authorizerAlias = [...aliases].find(([, name]) => name === AUTHORIZER.name)![0];
    const authorizerFunction = resourcesOf(stage)[authorizerAlias]!.Properties.FunctionName.Ref as string;
    expect(uri).toContain(`{"Fn::GetAtt":["${authorizerFunction}","Arn"]},":${LIVE_ALIAS}/invocations"`);
    // Unchanged by the alias: the TOKEN authorizer's result cache (usageIdentifierKey comes from its answer).
    expect(authorizer.Properties.AuthorizerResultTtlInSeconds).toBe(STAGES[stage].authorizerCacheTtl.toSeconds());
    // API Gateway needs lambda:InvokeFunction on exactly what its URI names: a permission on the function
    // would not let it call the alias (Lambda resource policies are per qualifier).
    const permissions = ofType(stage, 'AWS::Lambda::Permission').filter(
      ([, p]) => p.Properties.Principal === 'apigateway.amazonaws.com',
    );
    expect(permissions.length).toBeGreaterThanOrEqual(ROUTES.length + 1);
    for (const [id, p] of permissions) {
      const byArn = p.Properties.FunctionName['Fn::Join']?.[1];
      if (byArn) {
        // The authorizer's alias, by ARN as its URI names it; the permission waits for the alias to exist.
        expect(byArn, id).toEqual([{ 'Fn::GetAtt': [authorizerFunction, 'Arn'] }, `:${LIVE_ALIAS}`]);
        expect((resourcesOf(stage)[id] as { DependsOn?: string[] }).DependsOn, id).toContain(authorizerAlias);
      } else expect(aliases.has(p.Properties.FunctionName.Ref), id).toBe(true);
    }
  });
});

/**
 * CodeDeploy's name for each stage's traffic shifting: both the predefined 10-minute canary, the shortest that
 * outlasts the gates' earliest firing plus CloudWatch's delay and a margin (canary-timing.test.ts checks that relation
 * on every stage; the 5-minute canary ended just as the 2-datapoint gates could first fire).
 */
const CONFIGS: Record<StageName, (group: Resource) => void> = {
  production: (group) =>
    expect(group.Properties.DeploymentConfigName).toBe('CodeDeployDefault.LambdaCanary10Percent10Minutes'),
  staging: (group) =>
    expect(group.Properties.DeploymentConfigName).toBe('CodeDeployDefault.LambdaCanary10Percent10Minutes'),
};

describe.each(STAGE_NAMES)('stage %s: CodeDeploy', (stage) => {
  const groups = () => ofType(stage, 'AWS::CodeDeploy::DeploymentGroup');

  it('shifts each alias with a CodeDeploy canary that rolls back on alarms', () => {
    const aliases = aliasesOf(stage);
    expect(groups()).toHaveLength(FUNCTIONS.length);
    for (const [id, group] of groups()) {
      CONFIGS[stage](group);
      expect(group.Properties.DeploymentStyle, id).toEqual({
        DeploymentOption: 'WITH_TRAFFIC_CONTROL',
        DeploymentType: 'BLUE_GREEN',
      });
      expect(group.Properties.AutoRollbackConfiguration).toEqual({
        Enabled: true,
        Events: expect.arrayContaining([
          'DEPLOYMENT_FAILURE',
          'DEPLOYMENT_STOP_ON_ALARM',
          'DEPLOYMENT_STOP_ON_REQUEST',
        ]),
      });
      expect(group.Properties.AlarmConfiguration.Enabled).toBe(true);
    }
    // CloudFormation hands an alias update to CodeDeploy only with this update policy on the alias.
    for (const [id, alias] of ofType(stage, 'AWS::Lambda::Alias')) {
      const policy = alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate;
      expect(policy, id).toBeDefined();
      expect(resourcesOf(stage)[policy.DeploymentGroupName.Ref]?.Type).toBe('AWS::CodeDeploy::DeploymentGroup');
      expect(aliases.get(id)).toBeDefined();
    }
  });

  it('gates every group on alarms that exist in the stack, at most 10 (the CodeDeploy limit per group)', () => {
    for (const [id, group] of groups()) {
      const alarms = group.Properties.AlarmConfiguration.Alarms as { Name: { Ref: string } }[];
      expect(alarms.length, id).toBeGreaterThan(0);
      expect(alarms.length, id).toBeLessThanOrEqual(10);
      for (const a of alarms) expect(resourcesOf(stage)[a.Name.Ref]?.Type, id).toBe('AWS::CloudWatch::Alarm');
    }
  });

  it('rolls each function back on its own versions compared (version-gates.test.ts), never on the API 5xx rate', () => {
    const aliases = aliasesOf(stage);
    const groupOf = (name: string) => {
      const [aliasId] = [...aliases].find(([, n]) => n === name)!;
      const groupId = resourcesOf(stage)[aliasId]!.UpdatePolicy!.CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref;
      return (resourcesOf(stage)[groupId]!.Properties.AlarmConfiguration.Alarms as { Name: { Ref: string } }[]).map(
        (a) => resourcesOf(stage)[a.Name.Ref]!.Properties,
      );
    };
    // Anyone's traffic moves the gateway's 5XXError: as a gate, a flood of forged tokens would roll a release back.
    const readsApiWide = (a: Record<string, any>) =>
      JSON.stringify(a).includes('"AWS/ApiGateway"') || a.Namespace === 'AWS/ApiGateway';
    for (const route of ROUTES) {
      const alarms = groupOf(route.operationId);
      expect(alarms.some(readsApiWide), route.operationId).toBe(false);
      expect(alarms, route.operationId).toHaveLength(1);
      const names = alarms[0]!.Metrics.flatMap((m: any) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
      expect(names.sort()).toEqual(['Errors', 'Errors', 'Invocations', 'Invocations', 'ServerError', 'ServerError']);
      expect(alarms[0]!.Threshold).toBe(GATE_MARGIN);
    }
    // The TOKEN authorizer denies an unknown key by throwing "Unauthorized", which Lambda counts as an error: an
    // errors alarm on the whole alias would roll back on callers' mistakes (and on anyone's forged tokens). Its
    // failures reach clients as AUTHORIZER_FAILURE (a 5xx); a version that denies valid keys or fails shows as its
    // Errors rising above what the old version's share predicts (gate-simulation.test.ts plays it on canaries).
    const authorizer = groupOf(AUTHORIZER.name);
    expect(authorizer.some(readsApiWide)).toBe(false);
    expect(authorizer.some((a) => a.MetricName === 'Errors')).toBe(false);
    const versions = authorizer.find((a) =>
      a.Metrics?.some((m: any) => m.MetricStat?.Metric.Dimensions.some((d: any) => d.Name === 'ExecutedVersion')),
    )!;
    expect(versions, 'version-comparison gate').toBeDefined();
    expect(versions.Threshold).toBe(GATE_MARGIN);
    const invocations = versions.Metrics.filter((m: any) => m.MetricStat?.Metric.MetricName === 'Invocations');
    expect(invocations).toHaveLength(2);
    for (const m of invocations) expect(JSON.stringify(m.MetricStat.Metric.Dimensions)).toContain(`:${LIVE_ALIAS}`);
  });
});

/**
 * Assertions on the synthesized templates of both stages: deprecation, usage plans, gateway responses, tables,
 * alarms, outputs and cdk-nag. Bundling is skipped here; cli.test.ts synthesizes with real bundling.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { GATEWAY_RESPONSES } from '../../contract/gateway-responses.ts';
import { ROUTES } from '../../contract/routes.ts';
import { PLANS, PLAN_NAMES } from '../../contract/plans.ts';
import { planThrottles } from '../../lib/config/capacity.ts';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';
import { TABLES } from '../../contract/tables.ts';
import { ADMIN_OUTPUT_IDS, ADMIN_TABLES } from '../../lib/admin/targets.ts';
import { OUTPUT_IDS, USAGE_KEYS_PER_PLAN } from '../../lib/stacks/outputs.ts';
import { tableOperations } from '../../lib/stacks/function-access.ts';
import { built, resources, synthesizeStages, tableLogicalId, templates } from './stack-fixture.ts';

synthesizeStages();

describe.each(STAGE_NAMES)('stage %s', (stageName) => {
  const stage = STAGES[stageName];
  const t = () => templates[stageName];

  it('flags each operation the route table deprecates as deprecated in the API definition', () => {
    for (const route of ROUTES.filter((r) => r.deprecation)) {
      const [, part] = resources(t(), 'AWS::ApiGateway::DocumentationPart').find(
        ([, d]) => d.Properties.Location.Path === route.path && d.Properties.Location.Method === route.method,
      )!;
      expect(part.Properties.Location.Type).toBe('METHOD');
      expect(JSON.parse(part.Properties.Properties)).toMatchObject({
        deprecated: true,
        'x-sunset': route.deprecation!.sunsetAt,
      });
      t().hasResourceProperties('AWS::ApiGateway::Method', {
        OperationName: route.operationId,
        MethodResponses: [
          Match.objectLike({
            StatusCode: '200',
            ResponseParameters: {
              'method.response.header.Deprecation': true,
              'method.response.header.Sunset': true,
              'method.response.header.Link': true,
            },
          }),
        ],
      });
    }
    // Not vacuous: some operation is deprecated (the route table says which).
    expect(ROUTES.some((r) => r.deprecation)).toBe(true);
  });

  it('has a usage plan per plan, with the capacity model’s throttle, its keys’ limits in its tags, and no quota', () => {
    const plans = resources(t(), 'AWS::ApiGateway::UsagePlan');
    expect(plans.map(([, p]) => p.Properties.UsagePlanName).sort()).toEqual(
      PLAN_NAMES.map((n) => `${stage.stackName}-${PLANS[n].displayName}`).sort(),
    );
    const throttles = planThrottles(stage);
    for (const name of PLAN_NAMES) {
      const [, plan] = plans.find(([, p]) => p.Properties.UsagePlanName.endsWith(`-${PLANS[name].displayName}`))!;
      expect(plan.Properties.Throttle).toEqual({
        RateLimit: throttles[name].rateLimit,
        BurstLimit: throttles[name].burstLimit,
      });
      expect(plan.Properties.Quota).toBeUndefined();
      expect(plan.Properties.ApiStages).toHaveLength(1);
      const tags = Object.fromEntries(
        plan.Properties.Tags.map((x: { Key: string; Value: string }) => [x.Key, x.Value]),
      );
      const limits = PLANS[name].limits;
      expect(tags).toEqual({
        'animal-store:plan': name,
        'animal-store:per-key-per-minute': limits ? String(limits.perMinute) : 'agreed',
        'animal-store:per-key-per-day': limits ? String(limits.perDay) : 'agreed',
      });
      if (limits)
        expect(plan.Properties.Description).toContain(`${limits.perMinute}/min and ${limits.perDay}/day per key`);
    }
  });

  it('maps every gateway response to its status, the Error object and static headers', () => {
    const responses = resources(t(), 'AWS::ApiGateway::GatewayResponse');
    expect(responses.map(([, r]) => r.Properties.ResponseType).sort()).toEqual(
      GATEWAY_RESPONSES.map((r) => r.type).sort(),
    );
    for (const spec of GATEWAY_RESPONSES) {
      const [, r] = responses.find(([, x]) => x.Properties.ResponseType === spec.type)!;
      expect(r.Properties.StatusCode).toBe(String(spec.status));
      expect(JSON.parse(r.Properties.ResponseTemplates['application/json'])).toEqual({
        code: spec.codeFrom ? `$context.authorizer.${spec.codeFrom.key}` : spec.code,
        message: spec.message,
        status: spec.status,
      });
      expect(r.Properties.ResponseParameters).toEqual({
        ...Object.fromEntries(Object.entries(spec.headers).map(([k, v]) => [`gatewayresponse.header.${k}`, `'${v}'`])),
        ...Object.fromEntries(
          Object.entries(spec.authorizerHeaders ?? {}).map(([k, v]) => [
            `gatewayresponse.header.${k}`,
            `context.authorizer.${v}`,
          ]),
        ),
      });
    }
    const byType = (type: string) => responses.find(([, x]) => x.Properties.ResponseType === type)![1].Properties;
    expect(byType('MISSING_AUTHENTICATION_TOKEN').StatusCode).toBe('404');
    expect(byType('THROTTLED').StatusCode).toBe('429');
    // A banned key, or one whose day is spent, is told what the function would tell it (lambdas/domain/refusal.ts
    // denyContext).
    expect(byType('ACCESS_DENIED').ResponseParameters).toMatchObject({
      'gatewayresponse.header.Retry-After': 'context.authorizer.denyRetryAfter',
      'gatewayresponse.header.X-RateLimit-Limit': 'context.authorizer.denyLimit',
      'gatewayresponse.header.X-RateLimit-Reset': 'context.authorizer.denyUntil',
    });
    expect(byType('REQUEST_TOO_LARGE').StatusCode).toBe('413');
    // A banned key is told what the authorizer's Deny says (lambdas/domain/refusal.ts denyContext), not a fixed wait.
    expect(byType('ACCESS_DENIED').ResponseParameters).toMatchObject({
      'gatewayresponse.header.Retry-After': 'context.authorizer.denyRetryAfter',
      'gatewayresponse.header.X-RateLimit-Reset': 'context.authorizer.denyUntil',
    });
    // Its message too: who banned it, and until when.
    expect(byType('ACCESS_DENIED').ResponseTemplates['application/json']).toContain('$context.authorizer.denyMessage');
  });

  it('builds every table on demand, encrypted, with PITR, TTL from its definition, and the stage removal policy', () => {
    for (const def of TABLES) {
      const table = t().toJSON().Resources[tableLogicalId(t(), def.id)];
      expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
      // The key DynamoDB owns (no KMS charge): SSEEnabled false means "AWS owned key", not "unencrypted".
      expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: false });
      expect(table.Properties.TableName).toBeUndefined();
      const [replica] = table.Properties.Replicas;
      expect(replica.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      const ttl = 'ttlAttribute' in def ? def.ttlAttribute : undefined;
      expect(table.Properties.TimeToLiveSpecification).toEqual(ttl ? { AttributeName: ttl, Enabled: true } : undefined);
      expect((table.Properties.GlobalSecondaryIndexes ?? []).map((g: any) => g.IndexName)).toEqual(
        def.indexes.map((i) => i.indexName),
      );
      if (stageName === 'production') {
        expect(table.DeletionPolicy).toBe('RetainExceptOnCreate');
        expect(table.UpdateReplacePolicy).toBe('Retain');
        expect(replica.DeletionProtectionEnabled).toBe(true);
      } else {
        expect(table.DeletionPolicy).toBe('Delete');
        expect(replica.DeletionProtectionEnabled).toBe(false);
      }
    }
  });

  it('has alarms on 5xx rate, p99 latency, Lambda errors and throttles, and DynamoDB errors and throttles', () => {
    // The alarms that gate gradual deploys (1-minute, on the `live` aliases) are asserted in gradual-deploys.test.ts.
    const alarms = resources(t(), 'AWS::CloudWatch::Alarm')
      .filter(([id]) => !id.startsWith('Deploy'))
      .map(([, a]) => a.Properties);
    const metricNames = (a: any): string[] =>
      a.MetricName
        ? [a.MetricName]
        : (a.Metrics ?? []).map((m: any) => m.MetricStat?.Metric.MetricName).filter(Boolean);
    const having = (name: string) => alarms.filter((a) => metricNames(a).includes(name));
    expect(having('5XXError')[0]).toMatchObject({ Threshold: stage.alarms.serverErrorRatePercent });
    expect(having('Latency')[0]).toMatchObject({ ExtendedStatistic: 'p99', Threshold: stage.alarms.p99LatencyMs });
    // The authorizer's Errors count every unknown key: its alarm is on AuthorizerFailure instead.
    expect(having('Errors')).toHaveLength(ROUTES.length);
    expect(having('AuthorizerFailure')).toHaveLength(1);
    expect(having('Throttles')).toHaveLength(ROUTES.length + 1);
    // Every table a function uses (the admin tool's history table has none: its errors reach the admin directly).
    expect(having('SystemErrors')).toHaveLength(tableOperations().size);
    expect(having('ThrottledRequests')).toHaveLength(tableOperations().size);
    expect(tableOperations().size).toBe(TABLES.length - 1);
    expect(having('StorageUnavailable')).toHaveLength(1);
    for (const a of alarms) expect(metricNames(a).length).toBeLessThanOrEqual(10);
  });

  // The admin tool finds a stage's tables by these output ids (DescribeStacks): each must exist and name the
  // resource the tool takes it for.
  it('outputs every value the admin tool reads, each naming the right resource', () => {
    const outputs = t().toJSON().Outputs;
    const ref = (id: string) => outputs[id]?.Value?.Ref;
    const ids = ADMIN_OUTPUT_IDS;
    expect(Object.keys(ids.tables).sort()).toEqual(ADMIN_TABLES.map((d) => d.envVar).sort());
    for (const def of ADMIN_TABLES) {
      const id = ids.tables[def.envVar]!;
      expect(ref(id), id).toBe(tableLogicalId(t(), def.id));
    }
    // Which API keys its authorizer names: the tool makes paying keys only where it is each plan's one key.
    expect(outputs[OUTPUT_IDS.usageKeys].Value).toBe(USAGE_KEYS_PER_PLAN);
    expect(outputs[OUTPUT_IDS.cursorSecretArn]).toBeDefined();
    expect(JSON.stringify(outputs[OUTPUT_IDS.apiUrl].Value)).toContain('/v1/');
  });
});

it('reports no unacknowledged cdk-nag AwsSolutions findings', () => {
  const report = new AwsSolutionsChecks().validateScope(built.app.app);
  expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources[0]?.constructPath}`)).toEqual([]);
  expect(report.success).toBe(true);
});

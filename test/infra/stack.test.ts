/**
 * Assertions on the synthesized templates of both stages. One in-process synth for the whole file (it yields both
 * stacks); bundling is skipped here (`aws:cdk:bundling-stacks: []`): cli.test.ts synthesizes with real bundling.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_RESPONSES, methodNotAllowed } from '../../contract/gateway-responses.ts';
import { ROUTES, resourcePaths } from '../../contract/routes.ts';
import { PLANS, STANDARD_PLANS, usagePlanThrottle } from '../../contract/plans.ts';
import { STAGES, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { FUNCTION_ACCESS } from '../../lib/stacks/function-access.ts';
import { BEARER_VALIDATION_EXPRESSION } from '../../contract/auth.ts';
import { TABLES } from '../../contract/tables.ts';

type Resource = {
  Type: string;
  Properties: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};

const built = { app: undefined as ReturnType<typeof createApp> | undefined };
const templates = {} as Record<StageName, Template>;

beforeAll(() => {
  built.app = createApp({ context: { 'aws:cdk:bundling-stacks': [] } });
  for (const name of STAGE_NAMES) templates[name] = Template.fromStack(built.app.stacks[name]);
}, 240_000);

const resources = (t: Template, type: string): [string, Resource][] =>
  Object.entries(t.findResources(type)) as [string, Resource][];

/** The logical id of the table built from a definition (found by its partition key, unique per table). */
const tableLogicalId = (t: Template, defId: string): string => {
  const def = TABLES.find((d) => d.id === defId)!;
  const found = resources(t, 'AWS::DynamoDB::GlobalTable').find(
    ([, r]) => r.Properties.KeySchema[0].AttributeName === def.partitionKey.name,
  );
  if (!found) throw new Error(`no table ${defId}`);
  return found[0];
};

/** The function whose description names the operation, with its role's inline statements. */
const functionOf = (t: Template, name: string) => {
  const [id, fn] = resources(t, 'AWS::Lambda::Function').find(([, r]) =>
    r.Properties.Description?.endsWith(`: ${name}`),
  )!;
  const roleId = fn.Properties.Role['Fn::GetAtt'][0];
  const policy = resources(t, 'AWS::IAM::Policy').find(([, p]) =>
    p.Properties.Roles.some((r: any) => r.Ref === roleId),
  )!;
  return { id, fn, roleId, statements: policy[1].Properties.PolicyDocument.Statement as any[] };
};

describe.each(STAGE_NAMES)('stage %s', (stageName) => {
  const stage = STAGES[stageName];
  const t = () => templates[stageName];

  it('deploys the REST API at stage v1 with tracing and JSON access logs', () => {
    const [, s] = resources(t(), 'AWS::ApiGateway::Stage')[0]!;
    expect(s.Properties.StageName).toBe('v1');
    expect(s.Properties.TracingEnabled).toBe(true);
    const format = JSON.parse(s.Properties.AccessLogSetting.Format);
    expect(format).toMatchObject({ requestId: '$context.requestId', status: '$context.status' });
    expect(s.Properties.MethodSettings).toEqual([
      expect.objectContaining({ LoggingLevel: 'ERROR', DataTraceEnabled: false }),
    ]);
  });

  it('takes API keys from the authorizer', () => {
    t().hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER', Name: stage.stackName });
  });

  it('has a TOKEN authorizer on the Authorization header with the bearer expression and the stage cache TTL', () => {
    t().hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.Authorization',
      IdentityValidationExpression: BEARER_VALIDATION_EXPRESSION,
      AuthorizerResultTtlInSeconds: stage.authorizerCacheTtl.toSeconds(),
    });
    expect(stage.authorizerCacheTtl.toSeconds()).toBe(60);
  });

  it('runs every function on Node.js 24, arm64, with X-Ray and its own log group', () => {
    const fns = resources(t(), 'AWS::Lambda::Function');
    expect(fns.map(([, f]) => f.Properties.Description).sort()).toEqual(
      [...ROUTES.map((r) => r.operationId), 'authorizer'].map((n) => `Animal Store ${stageName}: ${n}`).sort(),
    );
    for (const [, f] of fns) {
      expect(f.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
      });
      expect(f.Properties.LoggingConfig.LogGroup).toBeDefined();
      const env = f.Properties.Environment.Variables;
      expect(env).toMatchObject({
        STAGE: stageName,
        POWERTOOLS_LOG_LEVEL: stage.logLevel,
        POWERTOOLS_SERVICE_NAME: 'animal-store',
      });
      for (const def of TABLES) expect(env[def.envVar]).toEqual({ Ref: tableLogicalId(t(), def.id) });
    }
    for (const [, g] of resources(t(), 'AWS::Logs::LogGroup'))
      expect(g.Properties.RetentionInDays).toBe(stage.logRetention);
  });

  it('passes the cursor secret (a dynamic reference) to listPets only', () => {
    for (const name of Object.keys(FUNCTION_ACCESS)) {
      const env = functionOf(t(), name).fn.Properties.Environment.Variables;
      if (FUNCTION_ACCESS[name]!.cursorSecret)
        expect(JSON.stringify(env.CURSOR_SECRET)).toContain('{{resolve:secretsmanager:');
      else expect(env.CURSOR_SECRET).toBeUndefined();
    }
    expect(FUNCTION_ACCESS.listPets!.cursorSecret).toBe(true);
  });

  it('grants each function exactly the table actions it uses, and nothing else', () => {
    const arn = (defId: string) => ({ 'Fn::GetAtt': [tableLogicalId(t(), defId), 'Arn'] });
    const expected: Record<string, { Action: string | string[]; Resource: unknown }[]> = {
      authorizer: [{ Action: 'dynamodb:GetItem', Resource: arn('ApiKeys') }],
      listPets: [
        { Action: 'dynamodb:UpdateItem', Resource: arn('State') },
        { Action: 'dynamodb:Scan', Resource: arn('Pets') },
        { Action: 'dynamodb:Query', Resource: { 'Fn::Join': ['', [arn('Pets'), '/index/byStatus']] } },
      ],
      createPet: [
        { Action: 'dynamodb:UpdateItem', Resource: arn('State') },
        { Action: 'dynamodb:PutItem', Resource: arn('Pets') },
        { Action: ['dynamodb:PutItem', 'dynamodb:DeleteItem'], Resource: arn('State') },
      ],
      getPet: [
        { Action: 'dynamodb:UpdateItem', Resource: arn('State') },
        { Action: 'dynamodb:GetItem', Resource: arn('Pets') },
      ],
      listOrders: [{ Action: 'dynamodb:UpdateItem', Resource: arn('State') }],
    };
    expect(Object.keys(expected).sort()).toEqual(Object.keys(FUNCTION_ACCESS).sort());
    for (const [name, tableStatements] of Object.entries(expected)) {
      const { fn, roleId, statements } = functionOf(t(), name);
      expect(statements).toEqual([
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: { 'Fn::GetAtt': [fn.Properties.LoggingConfig.LogGroup.Ref, 'Arn'] },
        },
        { Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' },
        ...tableStatements.map((s) => ({ Effect: 'Allow', ...s })),
      ]);
      const role = t().toJSON().Resources[roleId];
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        expect.objectContaining({ Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }),
      ]);
    }
  });

  it('guards every route with the authorizer and an API key, named by operationId', () => {
    const authorizer = resources(t(), 'AWS::ApiGateway::Authorizer')[0]![0];
    for (const route of ROUTES) {
      t().hasResourceProperties('AWS::ApiGateway::Method', {
        HttpMethod: route.method,
        OperationName: route.operationId,
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizer },
        ApiKeyRequired: true,
        Integration: Match.objectLike({ Type: 'AWS_PROXY' }),
      });
    }
  });

  it('answers other methods on each resource with a MOCK 405, Allow and the Error object', () => {
    const mocks = resources(t(), 'AWS::ApiGateway::Method').filter(([, m]) => m.Properties.HttpMethod === 'ANY');
    expect(mocks).toHaveLength(resourcePaths().size);
    for (const [path, methods] of resourcePaths()) {
      const answer = methodNotAllowed(methods);
      const mock = mocks.find(
        ([, m]) => m.Properties.OperationName === `methodNotAllowed${path.replace(/[^A-Za-z0-9]/g, '_')}`,
      );
      expect(mock, path).toBeDefined();
      const p = mock![1].Properties;
      expect(p.Integration.Type).toBe('MOCK');
      const [response] = p.Integration.IntegrationResponses;
      expect(response.StatusCode).toBe('405');
      expect(response.SelectionPattern).toBeUndefined();
      expect(response.ResponseParameters['method.response.header.Allow']).toBe(`'${methods.join(', ')}'`);
      expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual({
        code: 'method_not_allowed',
        message: expect.any(String),
        status: 405,
      });
      expect(response.ResponseTemplates['application/json']).toBe(answer.body);
      expect(p.MethodResponses[0].StatusCode).toBe('405');
    }
  });

  it('flags GET /pets/{petId} as deprecated in the API definition', () => {
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
    expect(ROUTES.find((r) => r.operationId === 'getPet')?.deprecation).toBeDefined();
  });

  it('has a usage plan per standard plan with the throttle and day quota of PLANS, and none for Enterprise', () => {
    const plans = resources(t(), 'AWS::ApiGateway::UsagePlan');
    expect(plans.map(([, p]) => p.Properties.UsagePlanName).sort()).toEqual(
      STANDARD_PLANS.map((n) => `${stage.stackName}-${PLANS[n].displayName}`).sort(),
    );
    for (const name of STANDARD_PLANS) {
      const expected = usagePlanThrottle(PLANS[name].limits!);
      const [, plan] = plans.find(([, p]) => p.Properties.UsagePlanName.endsWith(`-${PLANS[name].displayName}`))!;
      expect(plan.Properties.Throttle).toEqual({ RateLimit: expected.rateLimit, BurstLimit: expected.burstLimit });
      expect(plan.Properties.Quota).toEqual({ Limit: expected.quotaPerDay, Period: 'DAY' });
      expect(plan.Properties.ApiStages).toHaveLength(1);
    }
    // Above the app limits (test/infra/usage-plans.test.ts shows why these numbers never reject what the app admits).
    expect(usagePlanThrottle(PLANS.free.limits!)).toEqual({
      rateLimit: 2,
      burstLimit: 178,
      quotaPerDay: 3_015,
      guaranteed: true,
    });
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
        code: spec.code,
        message: spec.message,
        status: spec.status,
      });
      expect(r.Properties.ResponseParameters).toEqual(
        Object.fromEntries(Object.entries(spec.headers).map(([k, v]) => [`gatewayresponse.header.${k}`, `'${v}'`])),
      );
    }
    const byType = (type: string) => responses.find(([, x]) => x.Properties.ResponseType === type)![1].Properties;
    expect(byType('MISSING_AUTHENTICATION_TOKEN').StatusCode).toBe('404');
    expect(byType('THROTTLED').StatusCode).toBe('429');
    expect(byType('QUOTA_EXCEEDED').ResponseParameters['gatewayresponse.header.Retry-After']).toBeDefined();
    expect(byType('REQUEST_TOO_LARGE').StatusCode).toBe('413');
  });

  it('builds every table on demand, encrypted, with PITR, TTL from its definition, and the stage removal policy', () => {
    for (const def of TABLES) {
      const table = t().toJSON().Resources[tableLogicalId(t(), def.id)];
      expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
      expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
      expect(table.Properties.TableName).toBeUndefined();
      const [replica] = table.Properties.Replicas;
      expect(replica.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      const ttl = 'ttlAttribute' in def ? def.ttlAttribute : undefined;
      expect(table.Properties.TimeToLiveSpecification).toEqual(ttl ? { AttributeName: ttl, Enabled: true } : undefined);
      expect((table.Properties.GlobalSecondaryIndexes ?? []).map((g: any) => g.IndexName)).toEqual(
        def.indexes.map((i) => i.indexName),
      );
      if (stageName === 'production') {
        expect(table.DeletionPolicy).toBe('Retain');
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
    expect(having('SystemErrors')).toHaveLength(TABLES.length);
    expect(having('ThrottledRequests')).toHaveLength(TABLES.length);
    expect(having('StorageUnavailable')).toHaveLength(1);
    for (const a of alarms) expect(metricNames(a).length).toBeLessThanOrEqual(10);
  });

  it('outputs what the admin tool reads', () => {
    const outputs = t().toJSON().Outputs;
    for (const name of ['ApiUrl', 'ApiId', 'PetsTableName', 'KeysTableName', 'StateTableName', 'CursorSecretArn']) {
      expect(outputs[name], name).toBeDefined();
    }
    for (const plan of STANDARD_PLANS) expect(outputs[`UsagePlanId${PLANS[plan].displayName}`]).toBeDefined();
    expect(JSON.stringify(outputs.ApiUrl.Value)).toContain('/v1/');
  });
});

it('reports no unacknowledged cdk-nag AwsSolutions findings', () => {
  const report = new AwsSolutionsChecks().validateScope(built.app!.app);
  expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources[0]?.constructPath}`)).toEqual([]);
  expect(report.success).toBe(true);
});

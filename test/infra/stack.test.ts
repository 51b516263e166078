/**
 * Assertions on the synthesized templates of both stages: the API, its authorizer, the functions and their grants.
 * Bundling is skipped here (`aws:cdk:bundling-stacks: []`): cli.test.ts synthesizes with real bundling.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { methodNotAllowed } from '../../contract/gateway-responses.ts';
import { AUTHORIZER, ROUTES, resourcePaths } from '../../contract/routes.ts';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';
import { FUNCTION_ACCESS } from '../../lib/stacks/function-access.ts';
import { DEPLOY_HOOK_METADATA } from '../../lib/stacks/metadata.ts';
import { BEARER_VALIDATION_EXPRESSION } from '../../contract/auth.ts';
import { tablesOf } from '../../contract/tables.ts';
import { functionOf, resources, synthesizeStages, tableLogicalId, templates } from './stack-fixture.ts';

synthesizeStages();

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

  it('runs every function on Node.js 24, arm64, tracing what the stage samples, with its own log group', () => {
    // The API's functions; the pre-traffic hook (CodeDeploy's, checked in pre-traffic-hook.test.ts) is none of them.
    const fns = resources(t(), 'AWS::Lambda::Function').filter(([, f]) => !f.Metadata?.[DEPLOY_HOOK_METADATA]);
    expect(fns.map(([, f]) => f.Properties.Description).sort()).toEqual(
      [...ROUTES.map((r) => r.operationId), AUTHORIZER.name].map((n) => `Animal Store ${stageName}: ${n}`).sort(),
    );
    for (const [, f] of fns) {
      expect(f.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'PassThrough' },
      });
      expect(f.Properties.LoggingConfig.LogGroup).toBeDefined();
      const env = f.Properties.Environment.Variables;
      expect(env).toMatchObject({
        STAGE: stageName,
        LOG_LEVEL: stage.logLevel,
        SERVICE_NAME: 'animal-store',
      });
      // Only the tables its access names (least privilege, and the configuration says what it touches).
      const name = (f.Properties.Description as string).split(': ')[1]!;
      const own = tablesOf(FUNCTION_ACCESS[name]!.tables);
      expect(
        Object.keys(env)
          .filter((v) => v.endsWith('_TABLE_NAME'))
          .sort(),
        name,
      ).toEqual(own.map((def) => def.envVar).sort());
      for (const def of own) expect(env[def.envVar]).toEqual({ Ref: tableLogicalId(t(), def.id) });
    }
    for (const [id, g] of resources(t(), 'AWS::Logs::LogGroup'))
      expect(g.Properties.RetentionInDays, id).toBe(
        id === 'ApiAccessLogs' ? stage.accessLogRetention : stage.logRetention,
      );
  });

  it('grants each function exactly the table actions its entry declares (`access`), and nothing else', () => {
    const arn = (defId: string) => ({ 'Fn::GetAtt': [tableLogicalId(t(), defId), 'Arn'] });
    const secret = { Ref: resources(t(), 'AWS::SecretsManager::Secret')[0]![0] };
    // One statement per grant, in the entry's order: its actions on the table, or on one of its indexes.
    const expected = Object.fromEntries(
      Object.entries(FUNCTION_ACCESS).map(([name, access]) => [
        name,
        [
          ...access.tables.map((g) => ({
            Action: g.actions.length === 1 ? g.actions[0] : [...g.actions],
            Resource: g.index ? { 'Fn::Join': ['', [arn(g.table.id), `/index/${g.index}`]] } : arn(g.table.id),
          })),
          // Its cursor secret, and no other (cursor-secret.test.ts).
          ...(access.cursorSecret ? [{ Action: 'secretsmanager:GetSecretValue', Resource: secret }] : []),
        ],
      ]),
    );
    expect(Object.keys(expected).sort()).toEqual([...ROUTES.map((r) => r.operationId), AUTHORIZER.name].sort());
    for (const [name, tableStatements] of Object.entries(expected)) {
      const { fn, roleId, statements } = functionOf(t(), name);
      // Compared as (effect, action, resource) grants: the CDK's policy minimization
      // (@aws-cdk/aws-iam:minimizePolicies) sorts a statement's actions and merges statements on the same resources.
      const grants = (list: any[]) =>
        list
          .flatMap((st) =>
            [st.Action]
              .flat()
              .flatMap((action: string) =>
                [st.Resource].flat().map((resource: unknown) => `${st.Effect} ${action} ${JSON.stringify(resource)}`),
              ),
          )
          .sort();
      expect(grants(statements)).toEqual(
        grants([
          {
            Effect: 'Allow',
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Resource: { 'Fn::GetAtt': [fn.Properties.LoggingConfig.LogGroup.Ref, 'Arn'] },
          },
          { Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' },
          ...tableStatements.map((s) => ({ Effect: 'Allow', ...s })),
        ]),
      );
      const role = t().toJSON().Resources[roleId];
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        expect.objectContaining({
          Principal: { Service: 'lambda.amazonaws.com' },
          Action: 'sts:AssumeRole',
          // This account: a pinned one (production) or AWS::AccountId (confused-deputy.test.ts checks which).
          Condition: { StringEquals: { 'aws:SourceAccount': expect.anything() } },
        }),
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
});

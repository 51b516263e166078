/**
 * The bake's construct (lib/constructs/bake-hook.ts) in a bare stack: it synthesizes, its role allows exactly what
 * the bake does (its log group, the metrics it reads, the report, itself to continue, and the deployments of the
 * groups it is given), an invocation that fails is not retried beside its continuation, and cdk-nag finds nothing
 * unacknowledged. The stack's own wiring (the writes' groups' AfterAllowTraffic) is checked with the stack.
 * Bundling is skipped (`aws:cdk:bundling-stacks: []`).
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LambdaApplication, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { expect, it } from 'vitest';
import { BakeHook } from '../../lib/constructs/bake-hook.ts';
import { NO_BUNDLING } from './synth-context.ts';

function build() {
  const app = new App({ context: NO_BUNDLING });
  const stack = new Stack(app, 'BakeStack', { env: { account: '123456789012', region: 'us-east-1' } });
  // A test-only write: the stack's own are wired by canary-deployments.ts.
  const write = new LambdaFunction(stack, 'MakeThing', {
    runtime: Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: Code.fromInline('exports.handler = async () => ({})'),
  });
  const bake = new BakeHook(stack, 'Bake', {
    stage: 'dev',
    functions: new Map([['makeThing', write]]),
    customMetrics: { namespace: 'AnimalStore', dimensions: { service: 'animal-store', stage: 'dev' } },
  });
  const group = LambdaDeploymentGroup.fromLambdaDeploymentGroupAttributes(stack, 'Group', {
    application: LambdaApplication.fromLambdaApplicationName(stack, 'App', 'app'),
    deploymentGroupName: 'makeThing',
  });
  bake.allowDeploymentsOf([group]);
  return { app, stack, bake, template: Template.fromStack(stack) };
}

const { app, stack, bake, template } = build();

it('synthesizes a function with Lambda’s longest timeout, no retry, and its configuration', () => {
  const fn = template.toJSON().Resources[stack.getLogicalId(bake.function.node.defaultChild as never)];
  expect(fn.Properties.Timeout).toBe(900);
  expect(fn.DependsOn).toBeUndefined();
  const config = JSON.parse(JSON.stringify(fn.Properties.Environment.Variables.BAKE_CONFIG));
  expect(JSON.stringify(config)).toContain('makeThing');
  template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumRetryAttempts: 0 });
  template.hasResource('AWS::Logs::LogGroup', { DeletionPolicy: 'Retain' });
  expect(Object.keys(template.findResources('AWS::Logs::LogGroup'))).toContain('BakeLogs');
});

it('its role allows exactly what the bake does', () => {
  const policies = Object.values(template.findResources('AWS::IAM::Policy')) as any[];
  const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement);
  const bySid = Object.fromEntries(statements.map((s: any) => [s.Sid, s]));
  expect(Object.keys(bySid).sort()).toEqual(
    ['ContinueItself', 'ReadTheVersionsCounts', 'ReadTheWritesDeployments', 'ReportTheBake', 'WriteItsLogs'].sort(),
  );
  expect(bySid.ReadTheVersionsCounts.Action).toBe('cloudwatch:GetMetricData');
  expect(bySid.ReportTheBake.Action).toBe('codedeploy:PutLifecycleEventHookExecutionStatus');
  expect(bySid.ContinueItself.Action).toBe('lambda:InvokeFunction');
  // Its own ARN, unqualified: the continuation invokes the function by name.
  expect(bySid.ContinueItself.Resource).toEqual({
    'Fn::GetAtt': [stack.getLogicalId(bake.function.node.defaultChild as never), 'Arn'],
  });
  expect(bySid.ReadTheWritesDeployments.Action).toBe('codedeploy:GetDeployment');
  expect(JSON.stringify(bySid.ReadTheWritesDeployments.Resource)).toContain('deploymentgroup:app/makeThing');
  for (const s of statements) expect(s.Effect).toBe('Allow');
});

it('reports no unacknowledged cdk-nag AwsSolutions findings', () => {
  const report = new AwsSolutionsChecks().validateScope(app);
  const ours = report.violations.filter((v) =>
    v.violatingResources.some((r) => r.constructPath?.startsWith('BakeStack/Bake/')),
  );
  expect(ours.map((v) => `${v.ruleName} ${v.violatingResources[0]?.constructPath}`)).toEqual([]);
});

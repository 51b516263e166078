/**
 * AWS services that act with a role or a resource policy of ours, their calls played as the service makes them and
 * each checked by the IAM policy evaluator (lib/local/policy.ts) against the policies exactly as the synthesized
 * template defines them, on ARNs formed as AWS forms them:
 *
 * - CodeDeploy, one gradual Lambda deployment per function: it assumes the deployment group's service role, reads
 *   the alias (GetAlias on the function's unqualified ARN, GetProvisionedConcurrencyConfig on the alias's), shifts
 *   weight (UpdateAlias with a RoutingConfig), reads the gate alarms (DescribeAlarms on each alarm's ARN) and
 *   finishes the shift (UpdateAlias). A denied call fails the deployment (IAM_ROLE_PERMISSIONS) and CloudFormation
 *   rolls the update back.
 * - CloudWatch, an alarm notifying: sns:Publish on the topic through its topic policy, and kms:GenerateDataKey and
 *   kms:Decrypt on the topic's key through the key policy, on behalf of an alarm of this account (allowed) and of
 *   another account (refused: the confused-deputy guard).
 * Bundling is skipped, as in stack.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { STAGES, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { awsValues, type AwsValues } from '../../lib/local/arns.ts';
import { evaluate, readStatements, type Request, type Statement } from '../../lib/local/policy.ts';
import { attachedDocuments } from '../../lib/local/role-policies.ts';
import type { CfnTemplate } from '../../lib/local/template.ts';
import { checkKeySecretName } from '../../lib/constructs/pre-traffic-hook.ts';
import { sharedStackInfo, sharedTemplateJson } from './shared-synth.ts';
import { AUTHORIZER, ROUTES, writes } from '../../contract/routes.ts';
import { existingItemListing, needsExistingItem } from '../../lambdas/hooks/pre-traffic-check.ts';

interface Stage {
  readonly template: CfnTemplate;
  readonly values: AwsValues;
  readonly account: string;
  readonly region: string;
}
const stages = {} as Record<StageName, Stage>;
const OTHER_ACCOUNT = '999999999999';

beforeAll(() => {
  for (const name of STAGE_NAMES) {
    const stack = sharedStackInfo(name);
    const account = stack.account ?? '123456789012';
    const region = stack.region ?? 'eu-west-1';
    const template = sharedTemplateJson(name) as CfnTemplate;
    stages[name] = {
      template,
      account,
      region,
      values: awsValues(template, { account, region, stackName: stack.stackName }),
    };
  }
}, 240_000);

const ofType = (t: CfnTemplate, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);
const refOf = (v: unknown): string => (v as { Ref: string }).Ref;

/** The role's identity statements and its trust policy, as the template defines them. */
function role(s: Stage, roleId: string): { identity: Statement[]; trust: Statement[] } {
  const identity = attachedDocuments(s.template, roleId).flatMap(({ source, document }) =>
    readStatements(document, s.values.resolve, source),
  );
  const trust = readStatements(
    s.template.Resources[roleId]!.Properties!.AssumeRolePolicyDocument,
    s.values.resolve,
    `${roleId} trust`,
  );
  return { identity, trust };
}

/** One CodeDeploy deployment of a Lambda alias, as the calls CodeDeploy makes with the group's service role. */
function codeDeployCalls(s: Stage, aliasId: string): (Request & { step: string })[] {
  const alias = s.template.Resources[aliasId]!;
  const functionName = s.values.nameOf(refOf(alias.Properties!.FunctionName));
  const aliasName = String(alias.Properties!.Name);
  // Lambda authorizes alias operations on `arn:aws:lambda:<region>:<account>:function:<name>`, whatever the alias.
  const fn = `arn:aws:lambda:${s.region}:${s.account}:function:${functionName}`;
  const groupId = refOf((alias as { UpdatePolicy?: any }).UpdatePolicy.CodeDeployLambdaAliasUpdate.DeploymentGroupName);
  const gates = (s.template.Resources[groupId]!.Properties!.AlarmConfiguration.Alarms as { Name: unknown }[]).map(
    (a) => `arn:aws:cloudwatch:${s.region}:${s.account}:alarm:${s.values.nameOf(refOf(a.Name))}`,
  );
  const hook = (alias as { UpdatePolicy?: any }).UpdatePolicy.CodeDeployLambdaAliasUpdate.BeforeAllowTrafficHook;
  const after = (alias as { UpdatePolicy?: any }).UpdatePolicy.CodeDeployLambdaAliasUpdate.AfterAllowTrafficHook;
  return [
    { step: 'GetAlias', action: 'lambda:GetAlias', resource: fn },
    {
      step: 'GetProvisionedConcurrencyConfig',
      action: 'lambda:GetProvisionedConcurrencyConfig',
      resource: `${fn}:${aliasName}`,
    },
    // BeforeAllowTraffic: CodeDeploy invokes the hook by its name before any weight moves; a denied invoke fails
    // the deployment, as the hook's own Failed does.
    {
      step: 'Invoke the BeforeAllowTraffic hook',
      action: 'lambda:InvokeFunction',
      resource: `arn:aws:lambda:${s.region}:${s.account}:function:${s.values.resolve(hook)}`,
    },
    // UpdateAlias(FunctionName, Name, FunctionVersion: old, RoutingConfig: { AdditionalVersionWeights: { new: 0.1 } })
    { step: 'UpdateAlias with a RoutingConfig', action: 'lambda:UpdateAlias', resource: fn },
    ...gates.map((alarm) => ({
      step: `DescribeAlarms ${alarm}`,
      action: 'cloudwatch:DescribeAlarms',
      resource: alarm,
    })),
    // UpdateAlias(FunctionName, Name, FunctionVersion: new, RoutingConfig: {}) ends the shift (or rolls it back).
    { step: 'UpdateAlias to finish', action: 'lambda:UpdateAlias', resource: fn },
    // AfterAllowTraffic (a write's group only): the bake, invoked by its name after the shift.
    ...(after === undefined
      ? []
      : [
          {
            step: 'Invoke the AfterAllowTraffic hook',
            action: 'lambda:InvokeFunction',
            resource: `arn:aws:lambda:${s.region}:${s.account}:function:${s.values.resolve(after)}`,
          },
        ]),
  ];
}

describe.each(STAGE_NAMES)('stage %s: CodeDeploy shifts every live alias', (stageName) => {
  const s = () => stages[stageName];
  const aliases = () => ofType(s().template, 'AWS::Lambda::Alias');
  const roleOf = (aliasId: string) => {
    const alias = s().template.Resources[aliasId] as { UpdatePolicy?: any };
    const groupId = refOf(alias.UpdatePolicy.CodeDeployLambdaAliasUpdate.DeploymentGroupName);
    return s().template.Resources[groupId]!.Properties!.ServiceRoleArn['Fn::GetAtt'][0] as string;
  };

  it('lets codedeploy.amazonaws.com assume the service role of every group', () => {
    expect(aliases().length).toBeGreaterThan(1);
    for (const [aliasId] of aliases()) {
      const roleId = roleOf(aliasId);
      const arn = s().values.resolve({ 'Fn::GetAtt': [roleId, 'Arn'] });
      const assume = {
        action: 'sts:AssumeRole',
        resource: arn,
        caller: { service: 'codedeploy.amazonaws.com' },
        context: { 'aws:SourceAccount': s().account },
      };
      expect(evaluate(role(s(), roleId).trust, assume), aliasId).toBe('allow');
      // The confused-deputy guard: CodeDeploy on behalf of another account's deployment group may not.
      const foreign = { ...assume, context: { 'aws:SourceAccount': '210987654321' } };
      expect(evaluate(role(s(), roleId).trust, foreign), aliasId).not.toBe('allow');
      expect(evaluate(role(s(), roleId).trust, { ...assume, caller: { service: 'lambda.amazonaws.com' } })).not.toBe(
        'allow',
      );
    }
  });

  it('allows every call of a gradual deployment of every function', () => {
    const denied: string[] = [];
    for (const [aliasId] of aliases()) {
      const { identity } = role(s(), roleOf(aliasId));
      for (const call of codeDeployCalls(s(), aliasId))
        if (evaluate(identity, call) !== 'allow')
          denied.push(`${aliasId}: ${call.step} (${call.action} on ${call.resource})`);
    }
    expect(denied).toEqual([]);
  });

  it('allows nothing beyond this stack: another function, another account, another alarm', () => {
    const [aliasId] = aliases()[0]!;
    const { identity } = role(s(), roleOf(aliasId));
    const { account, region } = s();
    for (const [action, resource] of [
      ['lambda:UpdateAlias', `arn:aws:lambda:${region}:${account}:function:someone-elses`],
      ['lambda:UpdateAlias', codeDeployCalls(s(), aliasId)[0]!.resource.replace(account, OTHER_ACCOUNT)],
      ['lambda:InvokeFunction', codeDeployCalls(s(), aliasId)[0]!.resource],
      ['lambda:DeleteAlias', codeDeployCalls(s(), aliasId)[0]!.resource],
      ['cloudwatch:DescribeAlarms', `arn:aws:cloudwatch:${region}:${account}:alarm:someone-elses`],
    ] as const)
      expect(evaluate(identity, { action, resource }), `${action} on ${resource}`).toBe('implicit-deny');
  });
});

describe.each(STAGE_NAMES)('stage %s: the pre-traffic hook judges each deployment', (stageName) => {
  const s = () => stages[stageName];
  const hookOf = (aliasId: string) => {
    const update = (s().template.Resources[aliasId] as { UpdatePolicy?: any }).UpdatePolicy.CodeDeployLambdaAliasUpdate;
    // The hook is named by its function's name (CloudFormation resolves it); found by that name among the functions.
    const name = s().values.resolve(update.BeforeAllowTrafficHook);
    const [hookId] = ofType(s().template, 'AWS::Lambda::Function').find(([id]) => s().values.nameOf(id) === name)!;
    const roleId = s().template.Resources[hookId]!.Properties!.Role['Fn::GetAtt'][0] as string;
    return { hookId, roleId, groupId: refOf(update.DeploymentGroupName), appId: refOf(update.ApplicationName) };
  };
  const groupArn = (appId: string, groupId: string) =>
    `arn:aws:codedeploy:${s().region}:${s().account}:deploymentgroup:${s().values.nameOf(appId)}/${s().values.nameOf(groupId)}`;

  /** The hook's calls for one deployment of the alias: as lambdas/hooks/pre-traffic-entry.ts makes them. */
  function hookCalls(aliasId: string): (Request & { step: string })[] {
    const { account, region, template, values } = s();
    const { groupId, appId } = hookOf(aliasId);
    const alias = template.Resources[aliasId]!;
    const fn = `arn:aws:lambda:${region}:${account}:function:${values.nameOf(refOf(alias.Properties!.FunctionName))}`;
    const [authorizerAlias] = ofType(template, 'AWS::Lambda::Alias').filter(([, a]) =>
      String(template.Resources[refOf(a.Properties!.FunctionName)]!.Properties!.Description).endsWith(
        `: ${AUTHORIZER.name}`,
      ),
    )[0]!;
    const authorizer = values.resolve(template.Resources[authorizerAlias]!.Properties!.FunctionName);
    // A check of an operation on an existing item finds one through the live listing of its collection
    // (lambdas/hooks/pre-traffic-hook.ts findExistingItem): each such listing's alias.
    const listings = [
      ...new Set(ROUTES.filter(needsExistingItem).flatMap((r) => existingItemListing(r, ROUTES)?.operationId ?? [])),
    ];
    expect(listings.length).toBeGreaterThan(0);
    const liveListings = listings.map((name) => {
      const [aliasOfListing] = ofType(template, 'AWS::Lambda::Alias').filter(([, a]) =>
        String(template.Resources[refOf(a.Properties!.FunctionName)]!.Properties!.Description).endsWith(`: ${name}`),
      )[0]!;
      const fnName = values.resolve(template.Resources[aliasOfListing]!.Properties!.FunctionName);
      return {
        step: `Invoke the live ${name}`,
        action: 'lambda:InvokeFunction',
        resource: `arn:aws:lambda:${region}:${account}:function:${fnName}:live`,
      };
    });
    return [
      { step: 'GetDeployment', action: 'codedeploy:GetDeployment', resource: groupArn(appId, groupId) },
      { step: 'Invoke the target version', action: 'lambda:InvokeFunction', resource: `${fn}:7` },
      // A read operation's or the authorizer's answers are compared with the version now live (the AppSpec's).
      { step: 'Invoke the current version', action: 'lambda:InvokeFunction', resource: `${fn}:6` },
      {
        step: 'Invoke the live authorizer',
        action: 'lambda:InvokeFunction',
        resource: `arn:aws:lambda:${region}:${account}:function:${authorizer}:live`,
      },
      ...liveListings,
      {
        step: 'GetSecretValue of the check key',
        action: 'secretsmanager:GetSecretValue',
        resource: `arn:aws:secretsmanager:${region}:${account}:secret:${checkKeySecretName(STAGES[stageName].name)}-AbCdEf`,
      },
      {
        step: 'PutLifecycleEventHookExecutionStatus',
        action: 'codedeploy:PutLifecycleEventHookExecutionStatus',
        // No resource type (Service Authorization Reference): authorized on "*".
        resource: '*',
      },
    ];
  }

  it('every alias runs the one hook, and the hook is allowed every call of its check', () => {
    const aliases = ofType(s().template, 'AWS::Lambda::Alias');
    expect(new Set(aliases.map(([id]) => hookOf(id).hookId)).size).toBe(1);
    const denied: string[] = [];
    for (const [aliasId] of aliases) {
      const { identity } = role(s(), hookOf(aliasId).roleId);
      for (const call of hookCalls(aliasId))
        if (evaluate(identity, call) !== 'allow')
          denied.push(`${aliasId}: ${call.step} (${call.action} on ${call.resource})`);
    }
    expect(denied).toEqual([]);
  });

  it('lets only Lambda assume its role, for this account', () => {
    const [[aliasId]] = ofType(s().template, 'AWS::Lambda::Alias');
    const roleId = hookOf(aliasId!).roleId;
    const assume = {
      action: 'sts:AssumeRole',
      resource: s().values.resolve({ 'Fn::GetAtt': [roleId, 'Arn'] }),
      caller: { service: 'lambda.amazonaws.com' },
      context: { 'aws:SourceAccount': s().account },
    };
    expect(evaluate(role(s(), roleId).trust, assume)).toBe('allow');
    expect(evaluate(role(s(), roleId).trust, { ...assume, context: { 'aws:SourceAccount': OTHER_ACCOUNT } })).not.toBe(
      'allow',
    );
  });

  it("allows nothing beyond its check: $LATEST, another stack's function or deployment, another secret", () => {
    const [[aliasId]] = ofType(s().template, 'AWS::Lambda::Alias');
    const { identity } = role(s(), hookOf(aliasId!).roleId);
    const calls = hookCalls(aliasId!);
    const { account, region } = s();
    const target = calls[1]!.resource;
    for (const [action, resource] of [
      ['lambda:InvokeFunction', target.slice(0, target.lastIndexOf(':'))],
      ['lambda:InvokeFunction', `arn:aws:lambda:${region}:${account}:function:someone-elses:1`],
      ['lambda:InvokeFunction', target.replace(account, OTHER_ACCOUNT)],
      ['lambda:UpdateAlias', target],
      // (Not PutLifecycleEventHookExecutionStatus: it takes no resource type, AWS authorizes it on "*" alone.)
      ['codedeploy:GetDeployment', `arn:aws:codedeploy:${region}:${account}:deploymentgroup:other-app/g`],
      ['codedeploy:StopDeployment', calls[0]!.resource],
      ['secretsmanager:GetSecretValue', `arn:aws:secretsmanager:${region}:${account}:secret:someone-elses-AbCdEf`],
    ] as const)
      expect(evaluate(identity, { action, resource }), `${action} on ${resource}`).toBe('implicit-deny');
  });
});

describe.each(STAGE_NAMES)('stage %s: the bake watches each write after the shift', (stageName) => {
  const s = () => stages[stageName];
  const baked = () =>
    ofType(s().template, 'AWS::Lambda::Alias').filter(
      ([, a]) => (a as { UpdatePolicy?: any }).UpdatePolicy.CodeDeployLambdaAliasUpdate.AfterAllowTrafficHook,
    );
  const bakeOf = (aliasId: string) => {
    const update = (s().template.Resources[aliasId] as { UpdatePolicy?: any }).UpdatePolicy.CodeDeployLambdaAliasUpdate;
    const name = s().values.resolve(update.AfterAllowTrafficHook);
    const [hookId] = ofType(s().template, 'AWS::Lambda::Function').find(([id]) => s().values.nameOf(id) === name)!;
    const roleId = s().template.Resources[hookId]!.Properties!.Role['Fn::GetAtt'][0] as string;
    const group = `arn:aws:codedeploy:${s().region}:${s().account}:deploymentgroup:${s().values.nameOf(refOf(update.ApplicationName))}/${s().values.nameOf(refOf(update.DeploymentGroupName))}`;
    return { roleId, group, self: `arn:aws:lambda:${s().region}:${s().account}:function:${name}` };
  };

  it('runs on the writes alone, and is allowed every call of its bake and nothing beyond', () => {
    const writesIds = ROUTES.filter(writes).length;
    expect(baked().length).toBe(writesIds);
    for (const [aliasId] of baked()) {
      const { roleId, group, self } = bakeOf(aliasId);
      const { identity } = role(s(), roleId);
      for (const call of [
        { action: 'codedeploy:GetDeployment', resource: group },
        { action: 'cloudwatch:GetMetricData', resource: '*' },
        { action: 'lambda:InvokeFunction', resource: self },
        { action: 'codedeploy:PutLifecycleEventHookExecutionStatus', resource: '*' },
      ])
        expect(evaluate(identity, call), `${aliasId}: ${call.action}`).toBe('allow');
      for (const [action, resource] of [
        ['lambda:InvokeFunction', `arn:aws:lambda:${s().region}:${s().account}:function:someone-elses`],
        ['codedeploy:GetDeployment', `arn:aws:codedeploy:${s().region}:${s().account}:deploymentgroup:other-app/g`],
        ['codedeploy:StopDeployment', group],
        ['cloudwatch:PutMetricData', '*'],
      ] as const)
        expect(evaluate(identity, { action, resource }), `${action} on ${resource}`).toBe('implicit-deny');
    }
  });
});

describe.each(STAGE_NAMES)('stage %s: alarms notify through the encrypted topic', (stageName) => {
  const s = () => stages[stageName];

  /** What CloudWatch asks SNS and KMS for when `alarm` (an ARN) notifies the topic. */
  function notify(alarmAccount: string) {
    const { template, values, region } = s();
    const [[topicId, topic]] = ofType(template, 'AWS::SNS::Topic') as unknown as [[string, { Properties: any }]];
    const topicArn = values.resolve({ Ref: topicId });
    const keyId = topic.Properties.KmsMasterKeyId['Fn::GetAtt'][0] as string;
    const keyArn = values.resolve({ 'Fn::GetAtt': [keyId, 'Arn'] });
    const [[alarmId]] = ofType(template, 'AWS::CloudWatch::Alarm');
    const alarm = `arn:aws:cloudwatch:${region}:${alarmAccount}:alarm:${values.nameOf(alarmId!)}`;
    const context = { 'aws:SourceAccount': alarmAccount, 'aws:SourceArn': alarm, 'aws:SecureTransport': 'true' };
    const caller = { service: 'cloudwatch.amazonaws.com' };
    const topicPolicy = ofType(template, 'AWS::SNS::TopicPolicy')
      .filter(([, p]) => (p.Properties!.Topics as unknown[]).some((t) => refOf(t) === topicId))
      .flatMap(([id, p]) => readStatements(p.Properties!.PolicyDocument, values.resolve, id));
    const keyPolicy = readStatements(template.Resources[keyId]!.Properties!.KeyPolicy, values.resolve, keyId);
    return {
      publish: evaluate(topicPolicy, { action: 'sns:Publish', resource: topicArn, caller, context }),
      generateDataKey: evaluate(keyPolicy, { action: 'kms:GenerateDataKey', resource: keyArn, caller, context }),
      decrypt: evaluate(keyPolicy, { action: 'kms:Decrypt', resource: keyArn, caller, context }),
    };
  }

  it("lets CloudWatch publish for this account's alarms: the topic policy and the key policy allow it", () => {
    expect(notify(s().account)).toEqual({ publish: 'allow', generateDataKey: 'allow', decrypt: 'allow' });
  });

  it("refuses CloudWatch acting for another account's alarm, at the topic and at the key", () => {
    const other = notify(OTHER_ACCOUNT);
    expect(other.publish).not.toBe('allow');
    expect(other.generateDataKey).not.toBe('allow');
    expect(other.decrypt).not.toBe('allow');
  });
});

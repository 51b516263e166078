/**
 * Operating the stages: what a rollback, an incident or a flood needs from the templates. Each test names the AWS
 * rule it encodes and runs on both stages' synthesized templates (or the cloud assembly's manifest). What the stages
 * cost and what an audit reads: prod-ops-cost.test.ts.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { breakGlassOf } from '../../lib/stacks/break-glass.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { ACCOUNT_THROTTLE, KEY_BURST, PLAN_NAMES } from '../../contract/plans.ts';
import { edgeFor } from '../../lib/config/capacity.ts';
import { tableLogicalIdOf } from '../../lib/constructs/data-tables.ts';
import { TABLES } from '../../contract/tables.ts';
import { planKeyLogicalId, planUsagePlanLogicalId } from '../../lib/constructs/usage-plan-ids.ts';
import { STAGES, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { FUNCTION_ACCESS, functionConstructId } from '../../lib/stacks/function-access.ts';
import {
  BREAK_GLASS_CONTEXT,
  BREAK_GLASS_REASON,
  errorsOf,
  functionNamed,
  ofType,
  opsApps,
  synth,
  warningsOf,
  type OpsApps,
  type Resource,
} from './prod-ops-fixture.ts';

let apps: OpsApps['apps'];
let templates = {} as Record<StageName, Record<string, Resource>>;

beforeAll(() => {
  ({ apps, templates } = opsApps());
}, 240_000);

describe.each(STAGE_NAMES)('stage %s', (stage) => {
  const t = () => templates[stage];

  // CloudFormation deletes a resource that leaves the template unless its DeletionPolicy keeps it; each deploy that
  // changes a function replaces its AWS::Lambda::Version resource, so without Retain the version a rollback needs
  // is deleted as soon as the next one is live (CDK's currentVersion defaults to DESTROY).
  it('item 1: keeps every published Lambda version when a deploy replaces it', () => {
    const versions = ofType(t(), 'AWS::Lambda::Version');
    expect(versions).toHaveLength(ROUTES.length + 1);
    for (const [id, v] of versions) {
      expect(v.DeletionPolicy, id).toBe('RetainExceptOnCreate');
      expect(v.UpdateReplacePolicy, id).toBe('Retain');
    }
  });

  // CodeDeploy stops and rolls back a deployment whose group has an alarm in ALARM (DEPLOYMENT_STOP_ON_ALARM):
  // during an incident the fix could never go out. Break glass disables the alarm check for one deploy and shifts
  // all at once (CodeDeployDefault.LambdaAllAtOnce); without it every group gates on its alarms.
  it('item 2: breaks glass only on -c animal-store:breakGlass: all at once, alarms not checked', () => {
    const normal = ofType(t(), 'AWS::CodeDeploy::DeploymentGroup');
    const glass = ofType(
      Template.fromStack(apps.breakGlass.stacks[stage]).toJSON().Resources,
      'AWS::CodeDeploy::DeploymentGroup',
    );
    expect(glass.map(([id]) => id).sort()).toEqual(normal.map(([id]) => id).sort());
    for (const [id, g] of normal) {
      expect(g.Properties.AlarmConfiguration.Enabled, id).toBe(true);
      expect(g.Properties.AutoRollbackConfiguration.Events, id).toContain('DEPLOYMENT_STOP_ON_ALARM');
      expect(g.Properties.DeploymentConfigName, id).not.toBe('CodeDeployDefault.LambdaAllAtOnce');
    }
    for (const [id, g] of glass) {
      expect(g.Properties.DeploymentConfigName, id).toBe('CodeDeployDefault.LambdaAllAtOnce');
      expect(g.Properties.AlarmConfiguration.Enabled, id).toBe(false);
      // The alarm list stays: the next normal deploy only turns the check back on.
      expect(g.Properties.AlarmConfiguration.Alarms.length, id).toBeGreaterThan(0);
      expect(g.Properties.AutoRollbackConfiguration.Events, id).not.toContain('DEPLOYMENT_STOP_ON_ALARM');
      expect(g.Properties.AutoRollbackConfiguration.Events, id).toContain('DEPLOYMENT_FAILURE');
    }
    expect(warningsOf(apps.breakGlass, stage).some((w) => /Break glass/.test(w))).toBe(true);
    expect(warningsOf(apps.deployed, stage).some((w) => /Break glass/.test(w))).toBe(false);
  });

  // An incident in the live version (429 to everyone, an authorizer refusing the check's key) makes the pre-traffic
  // check and the bake "cannot judge": break glass skips both for its one deploy, or the incident blocks its fix.
  it('break glass skips the pre-traffic check and the bake, and records its reason as an output', () => {
    const hooksOf = (r: Record<string, Resource>) =>
      ofType(r, 'AWS::Lambda::Alias').map(([id, a]) => {
        const u = a.UpdatePolicy?.CodeDeployLambdaAliasUpdate ?? {};
        return [id, Object.keys(u).filter((k) => k.endsWith('AllowTrafficHook'))] as const;
      });
    const glass = Template.fromStack(apps.breakGlass.stacks[stage]).toJSON() as {
      Resources: Record<string, Resource>;
      Outputs: Record<string, { Value: unknown }>;
    };
    for (const [id, hooks] of hooksOf(t())) expect(hooks, id).toContain('BeforeAllowTrafficHook');
    for (const [id, hooks] of hooksOf(glass.Resources)) expect(hooks, id).toEqual([]);
    expect(glass.Outputs.BreakGlass?.Value).toBe(BREAK_GLASS_REASON);
    const normal = Template.fromStack(apps.deployed.stacks[stage]).toJSON() as { Outputs: Record<string, unknown> };
    expect(normal.Outputs.BreakGlass).toBeUndefined();
    // The lasting record: one parameter, the reason while glass is broken and `off` after, its history the log.
    expect(glass.Resources.BreakGlassRecord?.Properties.Value).toBe(BREAK_GLASS_REASON);
    expect(t().BreakGlassRecord?.Properties.Value).toBe('off');
    expect(glass.Resources.BreakGlassRecord?.Properties.Name).toBe(t().BreakGlassRecord?.Properties.Name);
  });

  // CloudFormation identifies a resource by its logical id: a changed id creates a new resource and deletes the old
  // one. A replaced usage plan loses every API key attached to it (403 for all its callers), a replaced table its
  // data (or, retained, it is orphaned), a replaced REST API its id and so every client's URL.
  it('item 4: pins the logical id of everything stateful or referenced from outside the stack', () => {
    const pinned: Record<string, string> = {
      // Every declared table (contract/tables.ts), by the logical id the stack pins for it.
      ...Object.fromEntries(TABLES.map((t) => [tableLogicalIdOf(t), 'AWS::DynamoDB::GlobalTable'])),
      // Each plan's usage plan, and its one API key and usage plan key: a key's value is unique per account and
      // Region, so a replacement would be refused, and cached authorizer results name it.
      ...Object.fromEntries(
        PLAN_NAMES.flatMap((plan) => [
          [planUsagePlanLogicalId(plan), 'AWS::ApiGateway::UsagePlan'],
          [planKeyLogicalId(plan), 'AWS::ApiGateway::ApiKey'],
          [`${planKeyLogicalId(plan)}Plan`, 'AWS::ApiGateway::UsagePlanKey'],
        ]),
      ),
      RestApi: 'AWS::ApiGateway::RestApi',
      ApiStage: 'AWS::ApiGateway::Stage',
      ApiAccessLogs: 'AWS::Logs::LogGroup',
      // The stage's execution log group: its name is fixed by API Gateway (API id and stage).
      ApiExecutionLogs: 'AWS::Logs::LogGroup',
      CursorSecret: 'AWS::SecretsManager::Secret',
      AlarmTopic: 'AWS::SNS::Topic',
      AlarmTopicKey: 'AWS::KMS::Key',
      WebAcl: 'AWS::WAFv2::WebACL',
      DeployApplication: 'AWS::CodeDeploy::Application',
      // The deploy hooks' log groups (kept like every function's).
      PreTrafficCheckLogs: 'AWS::Logs::LogGroup',
      BakeLogs: 'AWS::Logs::LogGroup',
      // Each function's log group (a replaced one would lose its logs), one per function of the route table.
      ...Object.fromEntries(
        Object.keys(FUNCTION_ACCESS).map((name) => [`${functionConstructId(name)}Logs`, 'AWS::Logs::LogGroup']),
      ),
    };
    for (const [id, type] of Object.entries(pinned)) expect(t()[id]?.Type, id).toBe(type);
    // Every resource of these types is pinned: a new table or plan must get a pinned id too.
    for (const type of new Set(Object.values(pinned)))
      expect(
        ofType(t(), type)
          .map(([id]) => id)
          .filter((id) => !(id in pinned)),
        type,
      ).toEqual([]);
    expect(TABLES.map((d) => `${d.id}Table`).every((id) => id in pinned)).toBe(true);
    expect(PLAN_NAMES.every((p) => planUsagePlanLogicalId(p) in pinned)).toBe(true);
  });

  // AWS::ApiGateway::Account is one setting per account and Region: a stack that sets it overwrites the role any
  // other application configured, and UpdateAccount allows one call per 20 s per account.
  it('item 5: touches no account-wide API Gateway setting', () => {
    expect(ofType(t(), 'AWS::ApiGateway::Account')).toEqual([]);
    const apigwRoles = ofType(t(), 'AWS::IAM::Role').filter(([, r]) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('apigateway.amazonaws.com'),
    );
    expect(apigwRoles).toEqual([]);
  });

  // DeletionPolicy RetainExceptOnCreate (RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE) behaves like Retain, except
  // that a rolled-back first create deletes what it made instead of leaving orphans that block the next attempt's
  // names and bill meanwhile.
  it('item 5: retains stateful resources as the stage says, except after a failed first create', () => {
    const expected = STAGES[stage].removalPolicy === 'retain-on-update-or-delete' ? 'RetainExceptOnCreate' : 'Delete';
    // Every declared table, which are all the stage's tables.
    const tables = TABLES.map(tableLogicalIdOf);
    const inTemplate = Object.entries(t()).filter(([, r]) => r.Type === 'AWS::DynamoDB::GlobalTable');
    expect(inTemplate.map(([id]) => id).sort()).toEqual([...tables].sort());
    for (const id of [...tables, 'CursorSecret', 'AlarmTopicKey', 'ApiAccessLogs'])
      expect(t()[id]!.DeletionPolicy, id).toBe(expected);
  });

  // API Gateway: stage-level throttling (MethodSettings `/*/*`) applies to every request of the stage, with or
  // without a key; a method-level limit above the account's (10,000 rps, burst 5,000) has no effect. It must not
  // reject what one usage plan admits (the plans' buckets are per key, this one is shared).
  it("item 8: throttles each method at its even part of the stage's share, with a bucket the authorizer holds", () => {
    const [[, s]] = ofType(t(), 'AWS::ApiGateway::Stage') as [[string, Resource]];
    const all = s.Properties.MethodSettings.find((m: any) => m.HttpMethod === '*' && m.ResourcePath === '/*');
    expect(all).toMatchObject({
      ThrottlingRateLimit: STAGES[stage].stageThrottle.rateLimit,
      ThrottlingBurstLimit: STAGES[stage].stageThrottle.burstLimit,
    });
    // The figures are the capacity model's (lib/config/capacity.ts), from the account quotas and share the stage declares.
    expect(STAGES[stage].stageThrottle).toEqual(
      edgeFor(STAGES[stage].accountQuotas, STAGES[stage].accountShare).stageThrottle,
    );
    // The rates: every method's together is at most the stage's share of the account, so a flood on one method
    // leaves the others theirs.
    expect(all.ThrottlingRateLimit * ROUTES.length).toBeLessThanOrEqual(
      ACCOUNT_THROTTLE.rateLimit * STAGES[stage].accountShare,
    );
    // The bucket: every method's at once never passes the authorizer's reservation (a stage burst meets the gateway's
    // 429, never Lambda's throttle and a 5xx), and holds two keys' declared bursts.
    expect(all.ThrottlingBurstLimit * ROUTES.length).toBeLessThanOrEqual(STAGES[stage].authorizerReservedConcurrency);
    expect(all.ThrottlingBurstLimit).toBeGreaterThanOrEqual(2 * KEY_BURST);
    expect(all.ThrottlingBurstLimit).toBeLessThanOrEqual(ACCOUNT_THROTTLE.burstLimit);
  });

  // WAFv2: a REST API stage takes a REGIONAL web ACL, associated by the stage ARN
  // arn:<partition>:apigateway:<region>::/restapis/<api-id>/stages/<stage>; a rate-based rule counts per IP over a
  // 5-minute window (limit 10 to 2,000,000,000).
  it('item 8: puts a regional WAF web ACL with a per-IP rate rule on the stage', () => {
    const [[aclId, acl]] = ofType(t(), 'AWS::WAFv2::WebACL') as [[string, Resource]];
    expect(acl.Properties.Scope).toBe('REGIONAL');
    expect(acl.Properties.DefaultAction).toEqual({ Allow: {} });
    const rule = acl.Properties.Rules.find((r: { Name: string }) => r.Name === 'RatePerIp');
    // Blocked with the spec's answer to a request over a limit (edge-security.test.ts checks its body and headers).
    expect(rule.Action.Block.CustomResponse.ResponseCode).toBe(429);
    expect(rule.Statement.RateBasedStatement).toMatchObject({
      AggregateKeyType: 'IP',
      Limit: STAGES[stage].wafRequestsPerIpPer5Minutes,
    });
    expect(rule.Statement.RateBasedStatement.Limit).toBeGreaterThanOrEqual(10);
    const [[, assoc]] = ofType(t(), 'AWS::WAFv2::WebACLAssociation') as [[string, Resource]];
    expect(assoc.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    const arn = JSON.stringify(assoc.Properties.ResourceArn);
    expect(arn).toMatch(/:apigateway:/);
    expect(arn).toContain('::/restapis/');
    expect(arn).toContain('{"Ref":"RestApi"}');
    expect(arn).toContain('/stages/');
    expect(arn).toContain('{"Ref":"ApiStage"}');
  });

  // Lambda: reserved concurrency caps a function and takes that much from the account's pool, and the unreserved
  // pool may not drop below 100. The authorizer runs for every authorizer-cache miss (every random token of a
  // flood): capped, it cannot take the operations' concurrency.
  it('item 8: reserves (and caps) the authorizer concurrency, leaving the operations the unreserved pool', () => {
    const [, authorizer] = functionNamed(t(), AUTHORIZER.name);
    expect(authorizer.Properties.ReservedConcurrentExecutions).toBe(STAGES[stage].authorizerReservedConcurrency);
    for (const r of ROUTES)
      expect(
        functionNamed(t(), r.operationId)[1].Properties.ReservedConcurrentExecutions,
        r.operationId,
      ).toBeUndefined();
    // AWS's default account concurrency is 1,000; 100 must stay unreserved.
    expect(STAGES[stage].authorizerReservedConcurrency).toBeLessThanOrEqual(1_000 - 100);
  });

  // IAM: AWSCodeDeployRoleForLambdaLimited allows lambda:UpdateAlias on "*", i.e. on every function in the account.
  // CodeDeploy needs GetAlias/UpdateAlias on the aliases it shifts and cloudwatch:DescribeAlarms on the gates.
  it('item 9: gives CodeDeploy a role that may move only this stack’s live aliases and read its gate alarms', () => {
    const groups = ofType(t(), 'AWS::CodeDeploy::DeploymentGroup');
    const roleIds = new Set(groups.map(([, g]) => g.Properties.ServiceRoleArn['Fn::GetAtt'][0]));
    expect(roleIds.size).toBe(1);
    const [roleId] = [...roleIds];
    const role = t()[roleId!]!;
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const statements = ofType(t(), 'AWS::IAM::Policy')
      .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[]);
    // Lambda authorizes GetAlias and UpdateAlias against the unqualified function ARN, and
    // GetProvisionedConcurrencyConfig against the alias ARN (iam-authorization.test.ts checks every grant). Each
    // alias's ARN is spelled from its function's ARN and name: a Ref to the alias would close a dependency cycle
    // (the alias's UpdatePolicy names its deployment group, which waits for this policy).
    const aliases = ofType(t(), 'AWS::Lambda::Alias');
    const functionArns = aliases.map(([, a]) =>
      JSON.stringify({ 'Fn::GetAtt': [a.Properties.FunctionName.Ref, 'Arn'] }),
    );
    const aliasArns = aliases.map(([, a]) =>
      JSON.stringify({
        'Fn::Join': ['', [{ 'Fn::GetAtt': [a.Properties.FunctionName.Ref, 'Arn'] }, `:${a.Properties.Name}`]],
      }),
    );
    const resourcesOf = (s: any) =>
      [s.Resource]
        .flat()
        .map((r: any) => JSON.stringify(r))
        .sort();
    const shift = statements.find((s) => [s.Action].flat().includes('lambda:UpdateAlias'));
    expect([shift.Action].flat().sort()).toEqual(['lambda:GetAlias', 'lambda:UpdateAlias']);
    expect(resourcesOf(shift)).toEqual(functionArns.sort());
    const provisioned = statements.find((s) => [s.Action].flat().includes('lambda:GetProvisionedConcurrencyConfig'));
    expect([provisioned.Action].flat()).toEqual(['lambda:GetProvisionedConcurrencyConfig']);
    expect(resourcesOf(provisioned)).toEqual(aliasArns.sort());
    const gateAlarms = new Set(
      groups.flatMap(([, g]) => g.Properties.AlarmConfiguration.Alarms.map((a: any) => a.Name.Ref as string)),
    );
    const describe = statements.find((s) => [s.Action].flat().includes('cloudwatch:DescribeAlarms'));
    expect(new Set([describe.Resource].flat().map((r: any) => r['Fn::GetAtt'][0]))).toEqual(gateAlarms);
    for (const s of statements) expect(JSON.stringify(s.Resource), JSON.stringify(s.Action)).not.toBe('"*"');
    // An inline policy is its own resource: each group waits for it, or a deployment could run without it.
    const policyIds = ofType(t(), 'AWS::IAM::Policy')
      .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
      .map(([id]) => id);
    for (const [id, g] of groups) expect((g as any).DependsOn, id).toEqual(expect.arrayContaining(policyIds));
  });

  // DynamoDB: SSEEnabled false is encryption at rest with the AWS owned key (no KMS charge); true with SSEType KMS
  // and no key is the AWS managed key aws/dynamodb, billed per KMS request.
});

describe('item 3: staging exercises the canary before production', () => {
  // Without a CodeDeploy group on the alias (UpdatePolicy CodeDeployLambdaAliasUpdate), CloudFormation moves the
  // alias at once and nothing shows the shifting works until production.
  it.each(STAGE_NAMES)('%s shifts every alias through CodeDeploy', (stage) => {
    for (const [id, alias] of ofType(templates[stage], 'AWS::Lambda::Alias'))
      expect(alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate, id).toBeDefined();
  });
});

describe('item 5: production is pinned and protected; the account setting has its own stack', () => {
  // CloudFormation refuses DeleteStack while termination protection is on (a stack property, not a resource).
  it('turns termination protection on for production only (cloud assembly manifest)', () => {
    const assembly = apps.deployed.app.synth();
    expect(assembly.getStackByName(STAGES.production.stackName).terminationProtection).toBe(true);
    expect(assembly.getStackByName(STAGES.staging.stackName).terminationProtection).toBeFalsy();
  });

  it('refuses production without a pinned account, naming the context key; staging needs nothing', () => {
    expect(
      errorsOf(apps.bare, 'production').filter((e) => e.includes('animal-store:production:account=')),
    ).toHaveLength(1);
    expect(errorsOf(apps.bare, 'staging')).toEqual([]);
    expect(errorsOf(apps.deployed, 'production')).toEqual([]);
    expect(apps.deployed.stacks.production.account).toBe('123456789012');
  });

  it('keeps AWS::ApiGateway::Account and its role in AnimalStore-account, retained', () => {
    const t = Template.fromStack(apps.deployed.accountSettings).toJSON().Resources as Record<string, Resource>;
    const [[, account]] = ofType(t, 'AWS::ApiGateway::Account') as [[string, Resource]];
    expect(account.DeletionPolicy).toBe('RetainExceptOnCreate');
    expect(account.Properties.CloudWatchRoleArn).toEqual({ 'Fn::GetAtt': ['ApiGatewayCloudWatchRole', 'Arn'] });
    expect(t.ApiGatewayCloudWatchRole!.DeletionPolicy).toBe('RetainExceptOnCreate');
  });
});

describe('break glass needs a reason on production', () => {
  it('refuses production with breakGlass=true alone, naming the flag with a reason; staging takes it', () => {
    const app = synth({
      [BREAK_GLASS_CONTEXT]: 'true',
      'animal-store:production:account': '123456789012',
      'animal-store:production:alarmEmails': 'ops@example.com',
    });
    const lines = errorsOf(app, 'production').filter((e) => e.includes('break glass'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('-c animal-store:breakGlass="');
    expect(errorsOf(app, 'staging')).toEqual([]);
    expect(errorsOf(apps.breakGlass, 'production')).toEqual([]);
  });

  it('reads no, off, 0 and false as no break glass, never as a reason', () => {
    for (const word of ['no', 'off', '0', 'false', 'FALSE', '', false, undefined])
      expect(breakGlassOf(word), String(word)).toEqual({ on: false });
    expect(breakGlassOf('true')).toEqual({ on: true, reason: '' });
    expect(breakGlassOf(' the fix ')).toEqual({ on: true, reason: 'the fix' });
  });
});

describe('item 7: an alarm nobody hears', () => {
  it('refuses production without alarmEmails or alarmTopicArn, in one line naming both', () => {
    const lines = errorsOf(apps.bare, 'production').filter((e) => /alarm/.test(e));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('animal-store:production:alarmEmails=');
    expect(lines[0]).toContain('animal-store:production:alarmTopicArn=');
    // Either one is enough.
    expect(errorsOf(apps.deployed, 'production')).toEqual([]);
    expect(errorsOf(apps.breakGlass, 'production')).toEqual([]);
  });

  it('warns (does not refuse) for staging', () => {
    expect(errorsOf(apps.bare, 'staging')).toEqual([]);
    expect(warningsOf(apps.bare, 'staging').some((w) => w.includes('animal-store:staging:alarmEmails='))).toBe(true);
  });
});

/**
 * Operating the stages: what a rollback, an incident, an audit or a flood needs from the templates. Each test
 * names the AWS rule it encodes and runs on both stages' synthesized templates (or the cloud assembly's manifest).
 * Bundling is skipped; cli.test.ts synthesizes with real bundling and cdk-nag.
 */
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { ACCOUNT_THROTTLE, PLANS, STANDARD_PLANS, usagePlanThrottle } from '../../contract/plans.ts';
import { TABLES } from '../../contract/tables.ts';
import { STAGES, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { FUNCTION_ACCESS } from '../../lib/stacks/function-access.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { CDK_JSON_CONTEXT, NO_BUNDLING, SYNTH_CONTEXT } from './synth-context.ts';

type Resource = {
  Type: string;
  Properties: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  UpdatePolicy?: Record<string, any>;
};
type App = ReturnType<typeof createApp>;
/** The documented switch (docs/deployment.md, "Break glass"). */
const BREAK_GLASS_CONTEXT = 'animal-store:breakGlass';

/** As `cdk synth` with the given `-c` values (cdk.json's flags included). */
const synth = (context: Record<string, unknown>): App =>
  createApp({ context: { ...CDK_JSON_CONTEXT, ...NO_BUNDLING, ...context } });

const apps = {} as { deployed: App; bare: App; breakGlass: App; restored: App };
const RESTORED = 'animal-store-pets-restored';
const templates = {} as Record<StageName, Record<string, Resource>>;

beforeAll(() => {
  apps.deployed = createApp({ context: { ...SYNTH_CONTEXT } });
  // Nothing on the command line: what production must refuse.
  apps.bare = synth({});
  // Break glass, and production notified through an existing topic instead of e-mail.
  apps.breakGlass = synth({
    [BREAK_GLASS_CONTEXT]: 'true',
    'animal-store:production:account': '123456789012',
    'animal-store:production:alarmTopicArn': 'arn:aws:sns:eu-west-1:123456789012:team-alarms',
  });
  // A point-in-time restore of Pets, pointed at by context in both stages.
  apps.restored = createApp({
    context: {
      ...SYNTH_CONTEXT,
      'animal-store:staging:petsTableName': RESTORED,
      'animal-store:production:petsTableName': RESTORED,
    },
  });
  for (const name of STAGE_NAMES)
    templates[name] = Template.fromStack(apps.deployed.stacks[name]).toJSON().Resources as Record<string, Resource>;
}, 240_000);

const ofType = (t: Record<string, Resource>, type: string): [string, Resource][] =>
  Object.entries(t).filter(([, r]) => r.Type === type);
const errorsOf = (app: App, stage: StageName): string[] =>
  Annotations.fromStack(app.stacks[stage])
    .findError('*', Match.anyValue())
    .map((m) => String(m.entry.data));
const warningsOf = (app: App, stage: StageName): string[] =>
  Annotations.fromStack(app.stacks[stage])
    .findWarning('*', Match.anyValue())
    .map((m) => String(m.entry.data));
const functionNamed = (t: Record<string, Resource>, name: string): [string, Resource] =>
  ofType(t, 'AWS::Lambda::Function').find(([, f]) => f.Properties.Description?.endsWith(`: ${name}`))!;

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
  it('item 2: breaks glass only on -c animal-store:breakGlass=true: all at once, alarms not checked', () => {
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

  // CloudFormation identifies a resource by its logical id: a changed id creates a new resource and deletes the old
  // one. A replaced usage plan loses every API key attached to it (403 for all its callers), a replaced table its
  // data (or, retained, it is orphaned), a replaced REST API its id and so every client's URL.
  it('item 4: pins the logical id of everything stateful or referenced from outside the stack', () => {
    const pinned: Record<string, string> = {
      PetsTable: 'AWS::DynamoDB::GlobalTable',
      ApiKeysTable: 'AWS::DynamoDB::GlobalTable',
      StateTable: 'AWS::DynamoDB::GlobalTable',
      UsagePlanFree: 'AWS::ApiGateway::UsagePlan',
      UsagePlanPro: 'AWS::ApiGateway::UsagePlan',
      UsagePlanBusiness: 'AWS::ApiGateway::UsagePlan',
      // The Free key pool's plan: every pooled Free key's API Gateway key is in it.
      UsagePlanFreePool: 'AWS::ApiGateway::UsagePlan',
      RestApi: 'AWS::ApiGateway::RestApi',
      ApiStage: 'AWS::ApiGateway::Stage',
      ApiAccessLogs: 'AWS::Logs::LogGroup',
      CursorSecret: 'AWS::SecretsManager::Secret',
      AlarmTopic: 'AWS::SNS::Topic',
      AlarmTopicKey: 'AWS::KMS::Key',
      WebAcl: 'AWS::WAFv2::WebACL',
      DeployApplication: 'AWS::CodeDeploy::Application',
      ListPetsLogs: 'AWS::Logs::LogGroup',
      CreatePetLogs: 'AWS::Logs::LogGroup',
      GetPetLogs: 'AWS::Logs::LogGroup',
      ListOrdersLogs: 'AWS::Logs::LogGroup',
      AuthorizerLogs: 'AWS::Logs::LogGroup',
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
    expect(STANDARD_PLANS.every((p) => `UsagePlan${PLANS[p].displayName}` in pinned)).toBe(true);
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
    for (const id of ['PetsTable', 'ApiKeysTable', 'StateTable', 'CursorSecret', 'AlarmTopicKey', 'ApiAccessLogs'])
      expect(t()[id]!.DeletionPolicy, id).toBe(expected);
  });

  // API Gateway: stage-level throttling (MethodSettings `/*/*`) applies to every request of the stage, with or
  // without a key; a method-level limit above the account's (10,000 rps, burst 5,000) has no effect. It must not
  // reject what one usage plan admits (the plans' buckets are per key, this one is shared).
  it('item 8: throttles the whole stage, above every plan and within the account limit', () => {
    const [[, s]] = ofType(t(), 'AWS::ApiGateway::Stage') as [[string, Resource]];
    const all = s.Properties.MethodSettings.find((m: any) => m.HttpMethod === '*' && m.ResourcePath === '/*');
    expect(all).toMatchObject({
      ThrottlingRateLimit: STAGES[stage].stageThrottle.rateLimit,
      ThrottlingBurstLimit: STAGES[stage].stageThrottle.burstLimit,
    });
    for (const plan of STANDARD_PLANS) {
      const u = usagePlanThrottle(PLANS[plan].limits!);
      expect(all.ThrottlingBurstLimit, plan).toBeGreaterThanOrEqual(u.burstLimit);
      expect(all.ThrottlingRateLimit, plan).toBeGreaterThanOrEqual(u.rateLimit);
    }
    expect(all.ThrottlingBurstLimit).toBeLessThanOrEqual(ACCOUNT_THROTTLE.burstLimit);
    expect(all.ThrottlingRateLimit).toBeLessThanOrEqual(ACCOUNT_THROTTLE.rateLimit);
  });

  // WAFv2: a REST API stage takes a REGIONAL web ACL, associated by the stage ARN
  // arn:<partition>:apigateway:<region>::/restapis/<api-id>/stages/<stage>; a rate-based rule counts per IP over a
  // 5-minute window (limit 10 to 2,000,000,000).
  it('item 8: puts a regional WAF web ACL with a per-IP rate rule on the stage', () => {
    const [[aclId, acl]] = ofType(t(), 'AWS::WAFv2::WebACL') as [[string, Resource]];
    expect(acl.Properties.Scope).toBe('REGIONAL');
    expect(acl.Properties.DefaultAction).toEqual({ Allow: {} });
    const [rule] = acl.Properties.Rules;
    expect(rule.Action).toEqual({ Block: {} });
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
    // Each alias's ARN is spelled from its function's ARN and name: a Ref to the alias would close a dependency
    // cycle (the alias's UpdatePolicy names its deployment group, which waits for this policy).
    const aliasArns = ofType(t(), 'AWS::Lambda::Alias')
      .map(([, a]) =>
        JSON.stringify({
          'Fn::Join': ['', [{ 'Fn::GetAtt': [a.Properties.FunctionName.Ref, 'Arn'] }, `:${a.Properties.Name}`]],
        }),
      )
      .sort();
    const shift = statements.find((s) => [s.Action].flat().includes('lambda:UpdateAlias'));
    expect([shift.Action].flat().sort()).toEqual([
      'lambda:GetAlias',
      'lambda:GetProvisionedConcurrencyConfig',
      'lambda:UpdateAlias',
    ]);
    expect(
      [shift.Resource]
        .flat()
        .map((r: any) => JSON.stringify(r))
        .sort(),
    ).toEqual(aliasArns);
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
  it('item 12: encrypts every table with the AWS owned key', () => {
    for (const [id, table] of ofType(t(), 'AWS::DynamoDB::GlobalTable'))
      expect(table.Properties.SSESpecification, id).toEqual({ SSEEnabled: false });
  });

  // API Gateway stores the access log destination without LogGroup.Arn's trailing ":*": a template that renders
  // the Arn attribute drifts on every drift detection (flag @aws-cdk/aws-apigateway:logGroupDestinationArnWithoutWildcard).
  it('item 12: names the access log group by an ARN without the trailing :*', () => {
    const [[, s]] = ofType(t(), 'AWS::ApiGateway::Stage') as [[string, Resource]];
    const destination = JSON.stringify(s.Properties.AccessLogSetting.DestinationArn);
    expect(destination).not.toContain('"Fn::GetAtt":["ApiAccessLogs","Arn"]');
    expect(destination).toContain(':log-group:');
    expect(destination).toContain('{"Ref":"ApiAccessLogs"}');
  });

  // CloudFormation cannot re-point a table resource at another table: a point-in-time restore creates a new
  // table, so the stack must stop creating its own and use the restored one by name (grants, environment,
  // alarms, outputs), while the replaced one leaves the template (kept by its DeletionPolicy in production).
  it('item 12: points the stack at an existing (restored) table given by context', () => {
    const restored = Template.fromStack(apps.restored.stacks[stage]).toJSON();
    const r = restored.Resources as Record<string, Resource>;
    const pets = TABLES.find((d) => d.id === 'Pets')!;
    expect(r.PetsTable).toBeUndefined();
    expect(r.ApiKeysTable?.Type).toBe('AWS::DynamoDB::GlobalTable');
    for (const [id, f] of ofType(r, 'AWS::Lambda::Function'))
      expect(f.Properties.Environment.Variables[pets.envVar], id).toBe(RESTORED);
    const grants = ofType(r, 'AWS::IAM::Policy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[]);
    const onPets = grants.filter((g) => JSON.stringify(g.Resource).includes(`:table/${RESTORED}`));
    expect(onPets.flatMap((g) => [g.Action].flat()).sort()).toEqual(
      ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:Scan'].sort(),
    );
    expect(JSON.stringify(restored.Outputs)).toContain(RESTORED);
    const alarmsOnPets = ofType(r, 'AWS::CloudWatch::Alarm').filter(([, a]) =>
      JSON.stringify(a.Properties).includes(`"Value":"${RESTORED}"`),
    );
    expect(alarmsOnPets).toHaveLength(2);
    expect(warningsOf(apps.restored, stage).some((w) => w.includes(RESTORED))).toBe(true);
  });

  // X-Ray bills per trace recorded; Lambda's Active mode samples on its own (1/s + 5 %) in every function on top of
  // API Gateway's decision. PassThrough records only what the stage's sampling rule sampled.
  it('item 11: traces what the stage samples, at the stage’s rate', () => {
    for (const [id, f] of ofType(t(), 'AWS::Lambda::Function'))
      expect(f.Properties.TracingConfig, id).toEqual({ Mode: 'PassThrough' });
    const [[, rule]] = ofType(t(), 'AWS::XRay::SamplingRule') as [[string, Resource]];
    expect(rule.Properties.SamplingRule).toMatchObject({
      FixedRate: STAGES[stage].traceSampleRate,
      ReservoirSize: 1,
      ServiceName: `${STAGES[stage].stackName}/v1`,
      ServiceType: 'AWS::ApiGateway::Stage',
    });
    expect(rule.Properties.SamplingRule.RuleName.length).toBeLessThanOrEqual(32);
  });

  // CloudWatch Logs bills storage per GB-month for as long as the retention keeps it.
  it('item 11: keeps access logs and function logs for their own, chosen retention', () => {
    expect(t().ApiAccessLogs!.Properties.RetentionInDays).toBe(STAGES[stage].accessLogRetention);
    for (const r of [...ROUTES.map((x) => x.operationId), AUTHORIZER.name]) {
      const id = `${r[0]!.toUpperCase()}${r.slice(1)}Logs`;
      expect(t()[id]!.Properties.RetentionInDays, id).toBe(STAGES[stage].logRetention);
    }
  });

  // CloudWatch bills each metric an alarm uses (every metric of a math alarm); a Logs Insights widget runs its
  // query (billed per GB scanned) on every dashboard refresh.
  it('item 11: bounds the billed alarm metrics and runs no Logs Insights query on refresh', () => {
    const metrics = ofType(t(), 'AWS::CloudWatch::Alarm').reduce(
      (n, [, a]) => n + (a.Properties.Metrics ? a.Properties.Metrics.filter((m: any) => m.MetricStat).length : 1),
      0,
    );
    // 44 for the alarms of item 11, and the State table's GetItem alarm now that the authorizer reads bans there.
    expect(metrics).toBeLessThanOrEqual(46);
    const [[, dashboard]] = ofType(t(), 'AWS::CloudWatch::Dashboard') as [[string, Resource]];
    expect(JSON.stringify(dashboard.Properties.DashboardBody)).not.toContain('"type\\":\\"log\\"');
  });
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

describe('item 12: docs/deployment.md says what each function may do', () => {
  // The "Least privilege" table, read back and compared with the IAM policies of every function in both templates.
  const documented = (): Map<string, Set<string>> => {
    const doc = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
    const section = doc.slice(
      doc.indexOf('## Least privilege'),
      doc.indexOf('\n## ', doc.indexOf('## Least privilege') + 3),
    );
    const out = new Map<string, Set<string>>();
    for (const line of section.split('\n')) {
      const m = /^\| (\w+) \| (.+) \|$/.exec(line);
      if (!m || m[1] === 'Function') continue;
      const grants = new Set<string>();
      for (const part of m[2]!.split('; ')) {
        // Not a DynamoDB grant (test/infra/cursor-secret.test.ts checks the secret's).
        if (part.includes('cursor secret')) continue;
        const g = /^((?:`\w+`(?:, )?)+) on (\w+)(?: index `(\w+)`)?/.exec(part);
        if (!g) throw new Error(`unreadable grant "${part}"`);
        for (const a of g[1]!.match(/`(\w+)`/g)!) grants.add(`${a.slice(1, -1)} ${g[2]}${g[3] ? `/${g[3]}` : ''}`);
      }
      out.set(m[1]!, grants);
    }
    return out;
  };

  it.each(STAGE_NAMES)('matches the DynamoDB grants of every function in %s', (stage) => {
    const t = templates[stage];
    const tableIds = new Map(TABLES.map((d) => [`${d.id}Table`, d.id]));
    const docs = documented();
    expect([...docs.keys()].sort()).toEqual(Object.keys(FUNCTION_ACCESS).sort());
    for (const name of Object.keys(FUNCTION_ACCESS)) {
      const [, fn] = functionNamed(t, name);
      const roleId = fn.Properties.Role['Fn::GetAtt'][0];
      const granted = new Set<string>();
      for (const [, p] of ofType(t, 'AWS::IAM::Policy').filter(([, p]) =>
        p.Properties.Roles.some((r: any) => r.Ref === roleId),
      ))
        for (const s of p.Properties.PolicyDocument.Statement as any[])
          for (const action of [s.Action].flat() as string[]) {
            if (!action.startsWith('dynamodb:')) continue;
            for (const resource of [s.Resource].flat()) {
              const text = JSON.stringify(resource);
              const table = [...tableIds].find(([id]) => text.includes(`"${id}"`))![1];
              const index = /\/index\/(\w+)/.exec(text)?.[1];
              granted.add(`${action.slice('dynamodb:'.length)} ${table}${index ? `/${index}` : ''}`);
            }
          }
      expect([...granted].sort(), name).toEqual([...docs.get(name)!].sort());
    }
  });
});

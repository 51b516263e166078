/**
 * Every grant of every synthesized template, in every variant of the synth the docs describe, is one AWS can apply:
 * each action an Allow statement names has a resource of a type AWS authorizes that action against (AWS's Service
 * Authorization Reference, with the Lambda guide's qualified-ARN cases; lib/preflight/authorization-reference.ts). A grant that
 * fails can never take effect: the call it was meant for is denied in AWS while every local test passes. Bundling
 * is skipped, as in stack.test.ts.
 */
import { readFileSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CfnTemplate } from '../../lib/local/template.ts';
import { STAGE_NAMES } from '../../lib/config/stages.ts';
import { grantsOf, grantsThatCannotApply } from '../../lib/preflight/authorization-reference.ts';
import { ACCOUNT, sharedTemplateJson } from './shared-synth.ts';
import { synthesizeVariants } from './template-variants.ts';

const PLACE = { account: '123456789012', region: 'eu-west-1', stackName: 'AnimalStore' };
/** The default synth's templates by stack (staging, production, account), and every variant's by file. */
const templates: Record<string, CfnTemplate> = {};
let variants: Record<string, string[]> = {};

beforeAll(() => {
  for (const name of [...STAGE_NAMES, ACCOUNT] as const) templates[name] = sharedTemplateJson(name) as CfnTemplate;
  variants = synthesizeVariants();
}, 480_000);
afterAll(() => {
  for (const paths of Object.values(variants))
    if (paths[0]) rmSync(dirname(paths[0]), { recursive: true, force: true });
});

const clone = (t: CfnTemplate): CfnTemplate => JSON.parse(JSON.stringify(t)) as CfnTemplate;

/** The CodeDeploy role's statement that lets it move the aliases, in a copy of `t` to change. */
function shiftStatement(t: CfnTemplate): { Action: string[]; Resource: unknown[] } {
  for (const r of Object.values(t.Resources))
    for (const s of r.Type === 'AWS::IAM::Policy' ? r.Properties!.PolicyDocument.Statement : [])
      if (s.Sid === 'ShiftThisStacksLiveAliases') return s;
  throw new Error('no ShiftThisStacksLiveAliases statement');
}

describe('the Service Authorization Reference', () => {
  it('finds no grant that can never apply in either stage or the account stack', async () => {
    expect(Object.keys(templates).sort()).toEqual(['account', 'production', 'staging']);
    const findings: string[] = [];
    for (const [name, t] of Object.entries(templates)) findings.push(...(await grantsThatCannotApply(name, t, PLACE)));
    expect(findings).toEqual([]);
    // Not vacuous: it read the roles' policies and every kind of resource policy the stacks write.
    const read = grantsOf(templates.staging!, PLACE);
    for (const kind of ['RoleDefaultPolicy', 'AlarmTopicKey', 'AlarmTopicPolicy', 'Permission'])
      expect(
        read.some((g) => g.where.includes(kind)),
        kind,
      ).toBe(true);
    expect(read.find((g) => g.where.startsWith('AlarmTopicKey') && g.action === 'kms:Decrypt')?.resources).toEqual([
      expect.stringMatching(/^arn:aws:kms:eu-west-1:123456789012:key\//),
    ]);
    expect(read.find((g) => g.action === 'lambda:InvokeFunction')?.resources).toEqual([
      expect.stringMatching(/^arn:aws:lambda:eu-west-1:123456789012:function:[^:]+:live$/),
    ]);
  });

  it('finds none in any variant the docs describe (an existing topic, break glass, restored tables)', async () => {
    const findings: string[] = [];
    for (const [variant, files] of Object.entries(variants))
      for (const file of files) {
        const t = JSON.parse(readFileSync(file, 'utf8')) as CfnTemplate;
        findings.push(...(await grantsThatCannotApply(`${variant}/${basename(file)}`, t, PLACE)));
      }
    expect(Object.values(variants).flat().length).toBeGreaterThanOrEqual(12);
    expect(findings).toEqual([]);
  });

  it('fails GetAlias and UpdateAlias granted on the alias ARN (the qualified ARN AWS does not authorize them on)', async () => {
    const findings: string[] = [];
    for (const name of ['staging', 'production']) {
      const t = clone(templates[name]!);
      const s = shiftStatement(t);
      s.Resource = s.Resource.map((fn) => ({ 'Fn::Join': ['', [fn, ':live']] }));
      findings.push(...(await grantsThatCannotApply(name, t, PLACE)));
    }
    expect(findings.map((f) => f.replace(/: lambda:\w+ is authorized on .*$/s, ''))).toEqual([
      'staging: DeployServiceRoleDefaultPolicyED8785CC statement ShiftThisStacksLiveAliases: lambda:GetAlias',
      'staging: DeployServiceRoleDefaultPolicyED8785CC statement ShiftThisStacksLiveAliases: lambda:UpdateAlias',
      'production: DeployServiceRoleDefaultPolicyED8785CC statement ShiftThisStacksLiveAliases: lambda:GetAlias',
      'production: DeployServiceRoleDefaultPolicyED8785CC statement ShiftThisStacksLiveAliases: lambda:UpdateAlias',
    ]);
  });

  it("fails the deploy role without its functions' ARNs", async () => {
    const t = clone(templates.staging!);
    shiftStatement(t).Resource = [];
    expect(await grantsThatCannotApply('staging', t, PLACE)).toEqual([
      expect.stringMatching(/ShiftThisStacksLiveAliases: lambda:GetAlias: .*granted on no resource$/),
      expect.stringMatching(/ShiftThisStacksLiveAliases: lambda:UpdateAlias: .*granted on no resource$/),
    ]);
  });

  it.each([
    ['lambda:GetAlias', 'fn:live', false],
    ['lambda:GetAlias', 'fn', true],
    ['lambda:GetProvisionedConcurrencyConfig', 'fn', false],
    ['lambda:GetProvisionedConcurrencyConfig', 'fn:live', true],
    ['lambda:InvokeFunction', 'fn:live', true],
    ['lambda:InvokeFunction', 'fn', true],
    ['dynamodb:GetItem', 'index', false],
    ['dynamodb:Query', 'index', true],
    ['dynamodb:GetItem', 'table', true],
    ['xray:PutTraceSegments', 'table', false],
    ['xray:PutTraceSegments', '*', true],
    ['logs:PutLogEvents', 'logs', true],
    ['logs:DescribeLogGroups', 'table', false],
    ['kms:GenerateDataKey*', 'key', true],
    ['kms:Decrypt', 'table', false],
    ['lambda:GetAliass', 'fn', false],
  ])('%s on %s applies: %s', async (action, on, applies) => {
    const fn = { 'Fn::GetAtt': ['Fn', 'Arn'] };
    const resources: Record<string, unknown> = {
      fn,
      'fn:live': { 'Fn::Join': ['', [fn, ':live']] },
      table: { 'Fn::GetAtt': ['Table', 'Arn'] },
      index: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Table', 'Arn'] }, '/index/byAnything']] },
      logs: { 'Fn::GetAtt': ['Logs', 'Arn'] },
      key: { 'Fn::GetAtt': ['Key', 'Arn'] },
      '*': '*',
    };
    const t: CfnTemplate = {
      Resources: {
        Fn: { Type: 'AWS::Lambda::Function', Properties: {} },
        Table: { Type: 'AWS::DynamoDB::GlobalTable', Properties: {} },
        Logs: { Type: 'AWS::Logs::LogGroup', Properties: {} },
        Key: { Type: 'AWS::KMS::Key', Properties: {} },
        Policy: {
          Type: 'AWS::IAM::Policy',
          Properties: { PolicyDocument: { Statement: [{ Effect: 'Allow', Action: action, Resource: resources[on] }] } },
        },
      },
    };
    expect((await grantsThatCannotApply('t', t, PLACE)).length === 0).toBe(applies);
  });
});

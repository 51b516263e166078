/**
 * The local IAM emulation's policy reading: what it understands, and that it refuses loudly what it does not (a
 * statement it cannot evaluate must never turn into an allow).
 */
import { describe, expect, it } from 'vitest';
import { accessRequests, rolePolicy } from '../../lib/local/iam.ts';
import { tableArn } from '../../lib/local/intrinsics.ts';
import type { CfnTemplate, FunctionDef } from '../../lib/local/template.ts';
import { TABLE_METADATA } from '../../lib/stacks/metadata.ts';

const FN = { logicalId: 'Fn' } as FunctionDef;
const local = { tables: { Pets: 'p-Pets', State: 'p-State' } };
const PETS = { 'Fn::GetAtt': ['PetsTable', 'Arn'] };

function template(statements: unknown[], role: Record<string, unknown> = {}): CfnTemplate {
  return {
    Resources: {
      Fn: { Type: 'AWS::Lambda::Function', Properties: { Role: { 'Fn::GetAtt': ['Role', 'Arn'] } } },
      Role: { Type: 'AWS::IAM::Role', Properties: role },
      Policy: {
        Type: 'AWS::IAM::Policy',
        Properties: { Roles: [{ Ref: 'Role' }], PolicyDocument: { Statement: statements } },
      },
      PetsTable: { Type: 'AWS::DynamoDB::GlobalTable', Metadata: { [TABLE_METADATA]: 'Pets' } },
      StateTable: { Type: 'AWS::DynamoDB::GlobalTable', Metadata: { [TABLE_METADATA]: 'State' } },
    },
  };
}
const ask = (action: string, table = 'p-Pets', suffix = '') => ({ action, resource: `${tableArn(table)}${suffix}` });

describe('rolePolicy', () => {
  it('allows only the actions and resources a statement names (wildcards, case-insensitive actions)', () => {
    const p = rolePolicy(
      template([
        { Effect: 'Allow', Action: 'dynamodb:get*', Resource: PETS },
        { Effect: 'Allow', Action: 'dynamodb:Query', Resource: { 'Fn::Join': ['', [PETS, '/index/*']] } },
      ]),
      FN,
      local,
    );
    expect(p.decide(ask('dynamodb:GetItem'))).toBe('allow');
    expect(p.decide(ask('dynamodb:PutItem'))).toBe('deny');
    expect(p.decide(ask('dynamodb:GetItem', 'p-State'))).toBe('deny');
    expect(p.decide(ask('dynamodb:Query', 'p-Pets', '/index/byStatus'))).toBe('allow');
    expect(p.decide(ask('dynamodb:Query'))).toBe('deny'); // the table itself is another resource
  });

  it('lets an explicit Deny win over any Allow', () => {
    const p = rolePolicy(
      template([
        { Effect: 'Allow', Action: 'dynamodb:*', Resource: '*' },
        { Effect: 'Deny', Action: 'dynamodb:DeleteItem', Resource: PETS },
      ]),
      FN,
      local,
    );
    expect(p.decide(ask('dynamodb:PutItem'))).toBe('allow');
    expect(p.decide(ask('dynamodb:DeleteItem'))).toBe('deny');
  });

  it('ignores statements that cannot bear on a DynamoDB call', () => {
    const logs = { Effect: 'Allow', Action: 'logs:PutLogEvents', Resource: { 'Fn::GetAtt': ['Logs', 'Arn'] } };
    expect(rolePolicy(template([logs]), FN, local).decide(ask('dynamodb:GetItem'))).toBe('deny');
  });

  it('reads NotAction and NotResource as IAM does', () => {
    const p = rolePolicy(
      template([
        { Effect: 'Allow', NotAction: 'dynamodb:DeleteItem', Resource: PETS },
        { Effect: 'Deny', Action: 'dynamodb:GetItem', NotResource: PETS },
      ]),
      FN,
      local,
    );
    expect(p.decide(ask('dynamodb:PutItem'))).toBe('allow');
    expect(p.decide(ask('dynamodb:DeleteItem'))).toBe('deny');
    expect(p.decide(ask('dynamodb:GetItem'))).toBe('allow');
    expect(p.decide(ask('dynamodb:GetItem', 'p-State'))).toBe('deny');
  });

  it.each([
    ['a Condition', { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: PETS, Condition: { Bool: {} } }],
    ['an unknown key', { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: PETS, NotPrincipal: '*' }],
    ['an unresolvable resource', { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: { 'Fn::Sub': 'x' } }],
  ])('refuses %s at start-up instead of allowing', (_what, statement) => {
    expect(() => rolePolicy(template([statement]), FN, local)).toThrow(/emulat|evaluated|cannot resolve/);
  });

  it('refuses managed policies from outside the template and permissions boundaries', () => {
    const role = { ManagedPolicyArns: ['arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess'] };
    expect(() => rolePolicy(template([], role), FN, local)).toThrow(/ManagedPolicyArns .* is not emulated/);
    const bounded = { PermissionsBoundary: 'arn:aws:iam::123456789012:policy/boundary' };
    expect(() => rolePolicy(template([], bounded), FN, local)).toThrow(/PermissionsBoundary is not emulated/);
  });
});

/** The template's role allows every DynamoDB call on Pets; `extra` attaches one more policy that denies PutItem. */
function withDeny(extra: CfnTemplate['Resources'], role: Record<string, unknown> = {}): CfnTemplate {
  const base = template([{ Effect: 'Allow', Action: 'dynamodb:*', Resource: PETS }], role);
  return { Resources: { ...base.Resources, ...extra } };
}
const DENY_PUT = { Statement: [{ Effect: 'Deny', Action: 'dynamodb:PutItem', Resource: '*' }] };

describe('rolePolicy: every form of attaching a policy to the role', () => {
  it.each([
    [
      'an AWS::IAM::ManagedPolicy listing the role in Roles',
      withDeny({
        Extra: { Type: 'AWS::IAM::ManagedPolicy', Properties: { Roles: [{ Ref: 'Role' }], PolicyDocument: DENY_PUT } },
      }),
    ],
    [
      "an AWS::IAM::ManagedPolicy in the role's ManagedPolicyArns",
      withDeny(
        { Extra: { Type: 'AWS::IAM::ManagedPolicy', Properties: { PolicyDocument: DENY_PUT } } },
        { ManagedPolicyArns: [{ Ref: 'Extra' }] },
      ),
    ],
    [
      'an AWS::IAM::RolePolicy naming the role by Ref',
      withDeny({
        Extra: {
          Type: 'AWS::IAM::RolePolicy',
          Properties: { RoleName: { Ref: 'Role' }, PolicyName: 'x', PolicyDocument: DENY_PUT },
        },
      }),
    ],
    [
      'an AWS::IAM::Policy naming the role by its RoleName',
      withDeny(
        {
          Extra: {
            Type: 'AWS::IAM::Policy',
            Properties: { Roles: ['fn-role'], PolicyName: 'x', PolicyDocument: DENY_PUT },
          },
        },
        { RoleName: 'fn-role' },
      ),
    ],
    [
      'an AWS::IAM::RolePolicy naming the role by its RoleName',
      withDeny(
        {
          Extra: {
            Type: 'AWS::IAM::RolePolicy',
            Properties: { RoleName: 'fn-role', PolicyName: 'x', PolicyDocument: DENY_PUT },
          },
        },
        { RoleName: 'fn-role' },
      ),
    ],
  ])('reads the Deny of %s', (_how, t) => {
    const p = rolePolicy(t, FN, local);
    expect(p.decide(ask('dynamodb:GetItem'))).toBe('allow');
    expect(p.decide(ask('dynamodb:PutItem'))).toBe('deny');
  });

  it('ignores a policy attached to another role of the template', () => {
    const t = withDeny({
      Other: { Type: 'AWS::IAM::Role', Properties: { RoleName: 'other' } },
      Extra: { Type: 'AWS::IAM::Policy', Properties: { Roles: ['other', { Ref: 'Other' }], PolicyDocument: DENY_PUT } },
    });
    expect(rolePolicy(t, FN, local).decide(ask('dynamodb:PutItem'))).toBe('allow');
  });

  it.each([
    ['AWS::IAM::Policy', { Roles: ['some-role'] }],
    ['AWS::IAM::ManagedPolicy', { Roles: ['some-role'] }],
    ['AWS::IAM::RolePolicy', { RoleName: 'some-role' }],
    ['AWS::IAM::Policy', { Roles: [{ 'Fn::ImportValue': 'role' }] }],
  ])('refuses at start-up an %s naming a role it cannot tie to the template (%j)', (type, names) => {
    const t = withDeny({ Extra: { Type: type, Properties: { ...names, PolicyDocument: DENY_PUT } } });
    expect(() => rolePolicy(t, FN, local)).toThrow(/names (the )?(a )?role .*(refuses|not emulated)/);
  });
});

describe('accessRequests', () => {
  it('asks per item of a transaction, per table of a batch and per index of a query', () => {
    expect(
      accessRequests('TransactWriteItemsCommand', {
        TransactItems: [{ Put: { TableName: 'p-Pets' } }, { Update: { TableName: 'p-State' } }],
      }),
    ).toEqual([ask('dynamodb:PutItem'), ask('dynamodb:UpdateItem', 'p-State')]);
    expect(accessRequests('BatchGetItemCommand', { RequestItems: { 'p-Pets': {}, 'p-State': {} } })).toEqual([
      ask('dynamodb:BatchGetItem'),
      ask('dynamodb:BatchGetItem', 'p-State'),
    ]);
    expect(accessRequests('QueryCommand', { TableName: 'p-Pets', IndexName: 'byStatus' })).toEqual([
      ask('dynamodb:Query', 'p-Pets', '/index/byStatus'),
    ]);
  });

  it('refuses a command it does not know', () => {
    expect(() => accessRequests('ExecuteStatementCommand', {})).toThrow(/does not know/);
  });
});

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

  it.each([
    ['a Condition', { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: PETS, Condition: { Bool: {} } }],
    ['NotAction', { Effect: 'Allow', NotAction: 'dynamodb:DeleteItem', Resource: PETS }],
    ['NotResource', { Effect: 'Allow', Action: 'dynamodb:GetItem', NotResource: PETS }],
    ['an unresolvable resource', { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: { 'Fn::Sub': 'x' } }],
  ])('refuses %s at start-up instead of allowing', (_what, statement) => {
    expect(() => rolePolicy(template([statement]), FN, local)).toThrow(/emulat|cannot resolve/);
  });

  it('refuses managed policies and permissions boundaries', () => {
    const role = { ManagedPolicyArns: ['arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess'] };
    expect(() => rolePolicy(template([], role), FN, local)).toThrow(/ManagedPolicyArns is not emulated/);
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

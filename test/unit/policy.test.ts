/**
 * The shared IAM policy evaluator (lib/local/policy.ts): AWS's evaluation order, wildcards, principals of resource
 * policies and the condition operators our templates use, and a refusal for anything it does not read.
 */
import { describe, expect, it } from 'vitest';
import { evaluate, readStatements } from '../../lib/local/policy.ts';

const read = (...statements: unknown[]) => readStatements({ Statement: statements }, String, 'test');
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:alarms';
const CLOUDWATCH = { service: 'cloudwatch.amazonaws.com' };

describe('evaluate', () => {
  it('denies implicitly, allows on a match, and lets an explicit Deny win', () => {
    const s = read(
      { Effect: 'Allow', Action: 'lambda:*Alias', Resource: 'arn:aws:lambda:*:*:function:fn' },
      { Effect: 'Deny', Action: 'lambda:DeleteAlias', Resource: '*' },
    );
    const on = (action: string, resource = 'arn:aws:lambda:eu-west-1:1:function:fn') =>
      evaluate(s, { action, resource });
    expect(on('lambda:getalias')).toBe('allow');
    expect(on('lambda:DeleteAlias')).toBe('explicit-deny');
    expect(on('lambda:GetAlias', 'arn:aws:lambda:eu-west-1:1:function:fn:live')).toBe('implicit-deny');
    expect(on('lambda:InvokeFunction')).toBe('implicit-deny');
  });

  it('matches service principals and accounts in resource policies', () => {
    const s = read(
      { Effect: 'Allow', Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish', Resource: TOPIC },
      {
        Effect: 'Allow',
        Principal: { AWS: 'arn:aws:iam::123456789012:root' },
        Action: 'sns:Subscribe',
        Resource: TOPIC,
      },
    );
    expect(evaluate(s, { action: 'sns:Publish', resource: TOPIC, caller: CLOUDWATCH })).toBe('allow');
    expect(evaluate(s, { action: 'sns:Publish', resource: TOPIC, caller: { service: 'events.amazonaws.com' } })).toBe(
      'implicit-deny',
    );
    expect(evaluate(s, { action: 'sns:Subscribe', resource: TOPIC, caller: { account: '123456789012' } })).toBe(
      'allow',
    );
    // An account stands for its IAM principals, not for a service acting on someone's behalf.
    expect(evaluate(s, { action: 'sns:Subscribe', resource: TOPIC, caller: CLOUDWATCH })).toBe('implicit-deny');
  });

  it('applies conditions on the request context: all keys, any value; a missing key fails a positive operator', () => {
    const s = read({
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
      Resource: TOPIC,
      Condition: {
        StringEquals: { 'aws:SourceAccount': '123456789012' },
        ArnLike: { 'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:*' },
      },
    });
    const publish = (context: Record<string, string>) =>
      evaluate(s, { action: 'sns:Publish', resource: TOPIC, caller: CLOUDWATCH, context });
    const alarm = 'arn:aws:cloudwatch:eu-west-1:123456789012:alarm:x';
    expect(publish({ 'aws:SourceAccount': '123456789012', 'aws:SourceArn': alarm })).toBe('allow');
    expect(publish({ 'aws:SourceAccount': '999999999999', 'aws:SourceArn': alarm })).toBe('implicit-deny');
    expect(publish({ 'aws:SourceAccount': '123456789012' })).toBe('implicit-deny');
  });

  it('reads Bool, negated operators and IfExists as IAM does', () => {
    const s = read(
      { Effect: 'Allow', Action: 'sns:Publish', Resource: '*', Principal: '*' },
      {
        Effect: 'Deny',
        Action: 'sns:Publish',
        Resource: '*',
        Principal: '*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
      {
        Effect: 'Deny',
        Action: 'sns:Publish',
        Resource: '*',
        Principal: '*',
        Condition: { StringNotEqualsIfExists: { 'aws:SourceAccount': '1' } },
      },
    );
    const publish = (context: Record<string, string>) =>
      evaluate(s, { action: 'sns:Publish', resource: TOPIC, context });
    expect(publish({ 'aws:SecureTransport': 'true', 'aws:SourceAccount': '1' })).toBe('allow');
    expect(publish({ 'aws:SecureTransport': 'false', 'aws:SourceAccount': '1' })).toBe('explicit-deny');
    // A missing key satisfies a negated operator (and any IfExists one).
    expect(publish({ 'aws:SecureTransport': 'true' })).toBe('explicit-deny');
    expect(publish({ 'aws:SecureTransport': 'true', 'aws:SourceAccount': '2' })).toBe('explicit-deny');
  });

  it.each([
    ['NotPrincipal', { Effect: 'Allow', Action: 'x:Y', Resource: '*', NotPrincipal: { AWS: '1' } }],
    [
      'a numeric operator',
      { Effect: 'Allow', Action: 'x:Y', Resource: '*', Condition: { NumericLessThan: { k: '1' } } },
    ],
    [
      'a set operator',
      { Effect: 'Allow', Action: 'x:Y', Resource: '*', Condition: { 'ForAnyValue:StringLike': { k: 'a' } } },
    ],
    ['a policy variable', { Effect: 'Allow', Action: 'x:Y', Resource: 'arn:aws:s3:::b/${aws:username}' }],
    ['Action with NotAction', { Effect: 'Allow', Action: 'x:Y', NotAction: 'x:Z', Resource: '*' }],
  ])('refuses %s when reading the policy', (_what, statement) => {
    expect(() => read(statement)).toThrow(/not evaluated/);
  });
});

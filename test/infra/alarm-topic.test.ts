/**
 * Alarms that reach someone: one SNS topic per stage, and every alarm of the stack notifies it on ALARM and on OK,
 * whichever construct created the alarm. Bundling is skipped (`aws:cdk:bundling-stacks: []`); cli.test.ts
 * synthesizes with real bundling and cdk-nag.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { STAGES, STAGE_NAMES, type StageName } from '../../lib/config/stages.ts';
import { AnimalStoreStack } from '../../lib/stacks/animal-store-stack.ts';
import { sharedTemplate } from './shared-synth.ts';
import { SYNTH_CONTEXT } from './synth-context.ts';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const templates = {} as Record<StageName, Template>;

beforeAll(() => {
  for (const name of STAGE_NAMES) templates[name] = sharedTemplate(name);
}, 240_000);

const resources = (t: Template, type: string) =>
  Object.entries(t.findResources(type)) as [string, { Properties: any }][];

/** A production stack alone, with extra context (as `-c key=value` on the CLI). */
const production = (context: Record<string, string>) =>
  Template.fromStack(
    new AnimalStoreStack(new App({ context: { ...NO_BUNDLING, ...context } }), 'P', { stage: STAGES.production }),
  );

describe.each(STAGE_NAMES)('stage %s', (stageName) => {
  const t = () => templates[stageName];

  it('has one alarm topic, encrypted with a rotated customer managed key CloudWatch may use', () => {
    const topics = resources(t(), 'AWS::SNS::Topic');
    expect(topics).toHaveLength(1);
    const [, topic] = topics[0]!;
    const keyId = topic.Properties.KmsMasterKeyId['Fn::GetAtt'][0];
    const key = t().toJSON().Resources[keyId];
    expect(key.Properties.EnableKeyRotation).toBe(true);
    // CloudWatch cannot publish to a topic encrypted with the AWS managed alias/aws/sns key; its key policy must let
    // cloudwatch.amazonaws.com call kms:Decrypt and kms:GenerateDataKey* (AWS knowledge center,
    // "cloudwatch-configure-alarm-sns").
    expect(key.Properties.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        // Only on behalf of this account's alarms (iam-walks.test.ts shows another account's are refused).
        Condition: { StringEquals: { 'aws:SourceAccount': expect.anything() } },
      }),
    );
  });

  it("lets only TLS publishers and this account's alarms publish", () => {
    const [[, policy]] = resources(t(), 'AWS::SNS::TopicPolicy') as [[string, { Properties: any }]];
    const statements = policy.Properties.PolicyDocument.Statement as any[];
    // enforceSSL: deny when aws:SecureTransport is false (cdk-nag AwsSolutions-SNS3).
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    // A topic policy replaces SNS's default one, so the alarms' publish right is stated (AWS knowledge center,
    // "cloudwatch-receive-sns-for-alarm-trigger": Allow cloudwatch.amazonaws.com sns:Publish, aws:SourceArn).
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: 'sns:Publish',
        Condition: {
          StringEquals: { 'aws:SourceAccount': expect.anything() },
          ArnLike: { 'aws:SourceArn': expect.anything() },
        },
      }),
    );
  });

  it('makes every alarm notify the topic on ALARM and on OK', () => {
    const [[topicId]] = resources(t(), 'AWS::SNS::Topic') as [[string, unknown]];
    const alarms = resources(t(), 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(10);
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties.AlarmActions, id).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions, id).toEqual([{ Ref: topicId }]);
    }
    expect(t().toJSON().Outputs.AlarmTopicArn.Value).toEqual({ Ref: topicId });
  });

  it('subscribes exactly the configured addresses (staging is quiet by default; production cannot be)', () => {
    const configured =
      stageName === 'production' ? [['email', SYNTH_CONTEXT['animal-store:production:alarmEmails']]] : [];
    expect(
      resources(t(), 'AWS::SNS::Subscription').map(([, s]) => [s.Properties.Protocol, s.Properties.Endpoint]),
    ).toEqual(configured);
  });
});

describe('alarm notifications from context', () => {
  it('subscribes each address of animal-store:<stage>:alarmEmails by e-mail', () => {
    const t = production({ 'animal-store:production:alarmEmails': 'ops@example.com, oncall@example.com' });
    const subscriptions = resources(t, 'AWS::SNS::Subscription').map(([, s]) => s.Properties);
    expect(subscriptions.map((s) => [s.Protocol, s.Endpoint]).sort()).toEqual([
      ['email', 'oncall@example.com'],
      ['email', 'ops@example.com'],
    ]);
  }, 120_000);

  it('uses an existing topic from animal-store:<stage>:alarmTopicArn instead of creating one', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:team-alarms';
    const t = production({ 'animal-store:production:alarmTopicArn': arn });
    expect(resources(t, 'AWS::SNS::Topic')).toHaveLength(0);
    for (const [id, alarm] of resources(t, 'AWS::CloudWatch::Alarm')) {
      expect(alarm.Properties.AlarmActions, id).toEqual([arn]);
      expect(alarm.Properties.OKActions, id).toEqual([arn]);
    }
  }, 120_000);
});

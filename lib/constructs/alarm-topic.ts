import { AspectPriority, Aspects, RemovalPolicy, Stack, type IAspect } from 'aws-cdk-lib';
import { Alarm, CompositeAlarm, type IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct, type IConstruct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';

export interface AlarmTopicProps {
  /** Subscribed by e-mail to the new topic. @default - none */
  readonly emails?: readonly string[];
  /** Use this existing topic instead of creating one. @default - a new topic */
  readonly topicArn?: string;
  /** Of the new topic's KMS key. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** For descriptions. @default - the stack name */
  readonly label?: string;
}

/**
 * The SNS topic a stage's alarms notify, and the aspect that makes every alarm in a scope notify it on ALARM and on
 * OK. A new topic is encrypted with its own customer managed key, because CloudWatch cannot publish to a topic
 * encrypted with the AWS managed `alias/aws/sns` key ("CloudWatch Alarms does not have authorization to access the
 * SNS topic encryption key"; the key policy must allow cloudwatch.amazonaws.com kms:Decrypt and
 * kms:GenerateDataKey*), and it refuses non-TLS publishers (enforceSSL).
 */
export class AlarmTopic extends Construct {
  readonly topic: ITopic;
  readonly action: IAlarmAction;

  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
    super(scope, id);
    const stack = Stack.of(this);
    const label = props.label ?? stack.stackName;
    if (props.topicArn) {
      this.topic = Topic.fromTopicArn(this, 'Topic', props.topicArn);
    } else {
      const key = new Key(this, 'Key', {
        description: `${label}: encrypts the alarm topic`,
        enableKeyRotation: true,
        removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      });
      // Only for this account's alarms (the confused-deputy guard AWS recommends for service principals): without
      // aws:SourceAccount, CloudWatch acting for an alarm of any account could use the key.
      key.addToResourcePolicy(
        new PolicyStatement({
          sid: 'CloudWatchAlarmsPublishToTheEncryptedTopic',
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
        }),
      );
      const topic = new Topic(this, 'Topic', { displayName: `${label} alarms`, masterKey: key, enforceSSL: true });
      // enforceSSL gives the topic a policy of its own, which replaces SNS's default one: let this account's
      // alarms publish explicitly (the statement AWS documents for alarm topics with a custom access policy).
      topic.addToResourcePolicy(
        new PolicyStatement({
          sid: 'CloudWatchAlarmsOfThisAccountPublish',
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['sns:Publish'],
          resources: [topic.topicArn],
          conditions: {
            StringEquals: { 'aws:SourceAccount': stack.account },
            ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*` },
          },
        }),
      );
      for (const email of props.emails ?? []) topic.addSubscription(new EmailSubscription(email));
      // Subscriptions (and any added by hand) belong to the topic: it must never be replaced by a refactor.
      pinLogicalId(topic, 'AlarmTopic');
      pinLogicalId(key, 'AlarmTopicKey');
      this.topic = topic;
    }
    this.action = new SnsAction(this.topic);
  }

  /** Every CloudWatch alarm in `scope`, present or added later, notifies this topic on ALARM and on OK. */
  notifyFromEveryAlarmIn(scope: IConstruct): void {
    Aspects.of(scope).add(new NotifyOnAlarmAndOk(this.action), { priority: AspectPriority.MUTATING });
  }
}

/** Adds one action as ALARM and OK action of each alarm it visits (once, however often it runs). */
class NotifyOnAlarmAndOk implements IAspect {
  private readonly done = new WeakSet<IConstruct>();
  private readonly action: IAlarmAction;

  constructor(action: IAlarmAction) {
    this.action = action;
  }

  visit(node: IConstruct): void {
    if (!(node instanceof Alarm || node instanceof CompositeAlarm) || this.done.has(node)) return;
    this.done.add(node);
    node.addAlarmAction(this.action);
    node.addOkAction(this.action);
  }
}

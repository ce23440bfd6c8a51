/**
 * Where alarms go: one SNS topic, encrypted with its own KMS key (CloudWatch cannot publish to a
 * topic under the AWS-managed SNS key), SSL-only, with an optional email subscription. Every alarm
 * of the stack, present or added later by any construct, notifies it on ALARM and on OK (a silence
 * alarm also on INSUFFICIENT_DATA).
 */
import { Aspects, Duration, type IAspect, Stack } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct, type IConstruct } from 'constructs';
import { isSilenceAlarm } from './standard-alarms.ts';

export interface AlarmNotificationsProps {
  /** Subscribed to the topic (the address confirms the subscription by email). @default none */
  readonly email?: string;
}

export class AlarmNotifications extends Construct {
  public readonly topic: Topic;
  public readonly key: Key;

  constructor(scope: Construct, id: string, props: AlarmNotificationsProps = {}) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Encrypts the security pipeline alarm and run topics',
      enableKeyRotation: true,
      pendingWindow: Duration.days(30),
    });
    // CloudWatch publishes alarm notifications as itself.
    this.topic = encryptedTopic(this, 'Topic', {
      key: this.key,
      publisher: 'cloudwatch.amazonaws.com',
      displayName: 'Security pipeline alarms',
      ...(props.email === undefined ? {} : { email: props.email }),
    });
    Aspects.of(Stack.of(this)).add(new NotifyOnAlarm(this.topic));
  }
}

/**
 * An SSL-only SNS topic under `key`, which `publisher` (a service principal, this account only) may
 * use to publish, with an optional email subscription.
 */
export function encryptedTopic(
  scope: Construct,
  id: string,
  props: { key: Key; publisher: string; displayName: string; email?: string },
): Topic {
  props.key.addToResourcePolicy(
    new PolicyStatement({
      principals: [new ServicePrincipal(props.publisher)],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(scope).account } },
    }),
  );
  const topic = new Topic(scope, id, {
    displayName: props.displayName,
    masterKey: props.key,
    enforceSSL: true,
  });
  if (props.email !== undefined) topic.addSubscription(new EmailSubscription(props.email));
  return topic;
}

/**
 * Adds the topic as the ALARM and OK action of every Alarm it visits, once, and as the
 * INSUFFICIENT_DATA action of the silence alarms (standard-alarms.ts), whose signal that state is.
 */
class NotifyOnAlarm implements IAspect {
  private readonly done = new WeakSet<Alarm>();
  constructor(private readonly topic: Topic) {}

  visit(node: IConstruct): void {
    if (!(node instanceof Alarm) || this.done.has(node)) return;
    this.done.add(node);
    const action = new SnsAction(this.topic);
    node.addAlarmAction(action);
    node.addOkAction(action);
    if (isSilenceAlarm(node)) node.addInsufficientDataAction(action);
  }
}

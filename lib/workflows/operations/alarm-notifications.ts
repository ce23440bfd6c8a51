/**
 * Where alarms go: one SNS topic, encrypted with its own KMS key (CloudWatch cannot publish to a
 * topic under the AWS-managed SNS key), SSL-only, that CloudWatch may publish to for this account's
 * alarms only, with an optional email subscription. Every alarm of the stack, present or added later
 * by any construct, notifies it on ALARM and on OK (a silence alarm also on INSUFFICIENT_DATA).
 */
import { ArnFormat, Aspects, Duration, type IAspect, Stack } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct, type IConstruct } from 'constructs';
import { DeadLetterQueue } from '../../platform/dead-letter-queue.ts';
import { isSilenceAlarm } from '../../platform/standard-alarms.ts';

export interface AlarmNotificationsProps {
  /** Subscribed to the topic (the address confirms the subscription by email). @default none */
  readonly email?: string;
  /**
   * A topic the team already has (SecurityPipeline's `alarmTopic`, checked in
   * lib/brought-resources.ts): alarms notify it instead, and CloudWatch's statements are added to
   * its policy and, when it is a key of this app, to its key's policy.
   * @default - a topic created here under `key`
   */
  readonly topic?: ITopic;
}

export class AlarmNotifications extends Construct {
  public readonly topic: ITopic;
  /** Encrypts the pipeline's own topics (the run topic, and the alarm topic when created here). */
  public readonly key: Key;

  constructor(scope: Construct, id: string, props: AlarmNotificationsProps = {}) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Encrypts the security pipeline alarm and run topics',
      enableKeyRotation: true,
      pendingWindow: Duration.days(30),
    });
    // CloudWatch publishes alarm notifications as itself, on behalf of the alarm (aws:SourceArn),
    // and its KMS requests through SNS carry the same keys.
    // https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html
    const publisher: TopicPublisher = {
      service: 'cloudwatch.amazonaws.com',
      sourceArn: Stack.of(this).formatArn({
        service: 'cloudwatch',
        resource: 'alarm',
        resourceName: '*',
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
      keyRequestsCarrySource: true,
    };
    if (props.topic === undefined) {
      this.topic = encryptedTopic(this, 'Topic', {
        key: this.key,
        publisher,
        displayName: 'Security pipeline alarms',
        ...(props.email === undefined ? {} : { email: props.email }),
      });
    } else {
      this.topic = props.topic;
      const key = props.topic.masterKey;
      allowPublisher(props.topic, key instanceof Key ? key : undefined, publisher);
      if (props.email !== undefined)
        subscribeEmail(this, 'Topic', props.topic, props.email, 'Security pipeline alarms');
    }
    // The pipeline's alarms only (scope is the pipeline): a team's own alarms elsewhere in the
    // stack keep their own actions.
    Aspects.of(scope).add(new NotifyOnAlarm(this.topic));
  }
}

/** An AWS service that publishes to a topic as itself. */
export interface TopicPublisher {
  /** Its service principal. */
  readonly service: string;
  /** What it publishes on behalf of (aws:SourceArn; may hold wildcards). */
  readonly sourceArn: string;
  /**
   * Whether its KMS requests (made through SNS) carry aws:SourceArn and aws:SourceAccount. EventBridge's
   * do not: AWS documents those keys as unsupported in the key policy for EventBridge, so a key
   * statement conditioned on them would refuse every event.
   * https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
   */
  readonly keyRequestsCarrySource: boolean;
}

/**
 * An SSL-only SNS topic under `key` (a customer managed key: AWS services cannot publish to a topic
 * under the AWS managed SNS key, whose policy cannot name them), which only `publisher`, on behalf
 * of its sources in this account, may publish to, with an optional email subscription.
 *
 * A topic policy replaces SNS's default policy, so the publisher's Allow must be in it: without
 * one the topic refuses the service.
 */
export function encryptedTopic(
  scope: Construct,
  id: string,
  props: { key: Key; publisher: TopicPublisher; displayName: string; email?: string },
): Topic {
  const topic = new Topic(scope, id, {
    displayName: props.displayName,
    masterKey: props.key,
    enforceSSL: true,
  });
  allowPublisher(topic, props.key, props.publisher);
  if (props.email !== undefined) subscribeEmail(scope, id, topic, props.email, props.displayName);
  return topic;
}

/**
 * Lets `publisher`, on behalf of its sources in this account, publish to `topic` and use `key` (when
 * given). A topic policy replaces SNS's default one; on an imported topic nothing is added.
 */
function allowPublisher(topic: ITopic, key: Key | undefined, publisher: TopicPublisher): void {
  const { service, sourceArn, keyRequestsCarrySource } = publisher;
  const fromOurSources = {
    ArnLike: { 'aws:SourceArn': sourceArn },
    StringEquals: { 'aws:SourceAccount': Stack.of(topic).account },
  };
  key?.addToResourcePolicy(
    new PolicyStatement({
      principals: [new ServicePrincipal(service)],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      ...(keyRequestsCarrySource ? { conditions: fromOurSources } : {}),
    }),
  );
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'AllowServicePublish',
      principals: [new ServicePrincipal(service)],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: fromOurSources,
    }),
  );
}

/**
 * An address that bounces or refuses mail loses every message after SNS's retries; a subscription
 * dead-letter queue keeps them for 14 days, and its depth alarm says so.
 * https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html
 */
function subscribeEmail(
  scope: Construct,
  id: string,
  topic: ITopic,
  email: string,
  displayName: string,
): void {
  const deadLetterQueue = new DeadLetterQueue(scope, `${id}EmailDeadLetters`, {
    purpose: `${displayName} messages SNS could not deliver to the email subscription`,
    runbook: 'docs/runbooks/dead-letter-queues.md#email-notifications-that-could-not-be-delivered',
  });
  topic.addSubscription(new EmailSubscription(email, { deadLetterQueue }));
}

/**
 * Adds the topic as the ALARM and OK action of every Alarm it visits, once, and as the
 * INSUFFICIENT_DATA action of the silence alarms (standard-alarms.ts), whose signal that state is.
 */
class NotifyOnAlarm implements IAspect {
  private readonly done = new WeakSet<Alarm>();
  constructor(private readonly topic: ITopic) {}

  visit(node: IConstruct): void {
    if (!(node instanceof Alarm) || this.done.has(node)) return;
    this.done.add(node);
    const action = new SnsAction(this.topic);
    node.addAlarmAction(action);
    node.addOkAction(action);
    if (isSilenceAlarm(node)) node.addInsufficientDataAction(action);
  }
}

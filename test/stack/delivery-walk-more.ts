/**
 * Delivery models of the storage and messaging types (S3 buckets, SNS topics and subscriptions,
 * SQS queues, log groups, state machine logging); see delivery-walk.ts.
 */
import { identityPoliciesOf } from '../../local/services/iam/template-policies.ts';
import type { TemplateResolver } from '../../local/services/iam/template-resolver.ts';
import { type Delivery, delivery, list, roleOf, serviceChecks, targetOf } from './delivery-checks.ts';

type Props = Record<string, unknown>;

/** The bucket of this template named `name`. */
function bucketNamed(resolver: TemplateResolver, name: string, what: string): string {
  const id = Object.keys(resolver.template.Resources).find(
    (key) => resolver.resource(key).Type === 'AWS::S3::Bucket' && resolver.ref(key) === name,
  );
  if (!id) throw new Error(`${what}: ${name} is no bucket of this template: no model`);
  return id;
}

/**
 * S3 event notifications (EventBridge, Lambda, SQS, SNS) and server access logs.
 * EventBridge: S3 needs no permission to send to the default bus
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/EventBridge.html).
 * Others: s3.amazonaws.com through the target's resource policy
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/grant-destinations-permissions-to-s3.html).
 * Access logs: logging.s3.amazonaws.com through the destination's bucket policy, which must be
 * SSE-S3 encrypted (https://docs.aws.amazon.com/AmazonS3/latest/userguide/enable-server-access-logging.html).
 */
export function bucket(resolver: TemplateResolver, id: string, props: Props): Delivery[] {
  const bucketArn = resolver.arn(id);
  const deliveries: Delivery[] = [];
  const notifications = (props.NotificationConfiguration as Props | undefined) ?? {};
  for (const key of Object.keys(notifications)) {
    const path = `AWS::S3::Bucket ${id} NotificationConfiguration.${key}`;
    if (key === 'EventBridgeConfiguration') {
      if ((notifications[key] as Props).EventBridgeEnabled === true)
        deliveries.push(delivery(path, 's3.amazonaws.com', id, 'the default event bus', () => []));
      continue;
    }
    const field = {
      LambdaConfigurations: 'Function',
      QueueConfigurations: 'Queue',
      TopicConfigurations: 'Topic',
    }[key];
    if (!field) throw new Error(`${path}: no model`);
    for (const [index, config] of list(notifications[key]).entries()) {
      const where = `${path}[${index}]`;
      const arn = resolver.resolveString((config as Props)[field], where);
      deliveries.push(
        delivery(where, 's3.amazonaws.com', id, targetOf(resolver, arn, where).id, (problems) =>
          serviceChecks(resolver, 's3.amazonaws.com', bucketArn, arn, where, problems),
        ),
      );
    }
  }
  const logging = props.LoggingConfiguration as Props | undefined;
  if (logging?.DestinationBucketName !== undefined) {
    const path = `AWS::S3::Bucket ${id} LoggingConfiguration`;
    const destination = bucketNamed(
      resolver,
      resolver.resolveString(logging.DestinationBucketName, path),
      path,
    );
    const prefix =
      logging.LogFilePrefix === undefined ? '' : resolver.resolveString(logging.LogFilePrefix, path);
    const object = `${resolver.arn(destination)}/${prefix}2026-01-01-00-00-00-0123456789ABCDEF`;
    deliveries.push(
      delivery(path, 'logging.s3.amazonaws.com', id, destination, (problems) => {
        const encryption = JSON.stringify(
          resolver.resolve(resolver.resource(destination).Properties?.BucketEncryption) ?? {},
        );
        if (encryption.includes('aws:kms'))
          problems.push(
            `${path}: ${destination} uses SSE-KMS; server access logs can only be delivered to an SSE-S3 bucket`,
          );
        return serviceChecks(resolver, 'logging.s3.amazonaws.com', bucketArn, object, path, problems);
      }),
    );
  }
  return deliveries;
}

/**
 * What SNS delivers to: an email address is no resource of ours (nothing to authorize); SQS and
 * Lambda endpoints and a subscription's dead-letter queue go through their resource policies.
 * https://docs.aws.amazon.com/sns/latest/dg/sns-sqs-as-subscriber.html
 */
function subscriptionDeliveries(
  resolver: TemplateResolver,
  id: string,
  topicArn: string,
  sub: Props,
  path: string,
): Delivery[] {
  const protocol = resolver.resolveString(sub.Protocol, `${path}.Protocol`);
  const deliveries: Delivery[] = [];
  if (['email', 'email-json', 'sms'].includes(protocol)) {
    deliveries.push(delivery(path, 'sns.amazonaws.com', id, `a ${protocol} endpoint`, () => []));
  } else if (protocol === 'sqs' || protocol === 'lambda') {
    const arn = resolver.resolveString(sub.Endpoint, `${path}.Endpoint`);
    deliveries.push(
      delivery(path, 'sns.amazonaws.com', id, targetOf(resolver, arn, path).id, (problems) =>
        serviceChecks(resolver, 'sns.amazonaws.com', topicArn, arn, path, problems),
      ),
    );
  } else {
    throw new Error(`${path}: no model of the ${protocol} protocol`);
  }
  const redrive = resolver.resolve(sub.RedrivePolicy) as { deadLetterTargetArn?: string } | undefined;
  if (redrive?.deadLetterTargetArn) {
    const dlq = redrive.deadLetterTargetArn;
    const where = `${path}.RedrivePolicy`;
    deliveries.push(
      delivery(where, 'sns.amazonaws.com', id, targetOf(resolver, dlq, where).id, (problems) =>
        serviceChecks(resolver, 'sns.amazonaws.com', topicArn, dlq, where, problems),
      ),
    );
  }
  return deliveries;
}

export function subscription(resolver: TemplateResolver, id: string, props: Props): Delivery[] {
  const topicArn = resolver.resolveString(props.TopicArn, `${id}.TopicArn`);
  return subscriptionDeliveries(resolver, id, topicArn, props, `AWS::SNS::Subscription ${id}`);
}

const TOPIC_FEEDBACK = /^(Application|Firehose|HTTP|Lambda|SQS)(Success|Failure)FeedbackRoleArn$/;

export function topic(resolver: TemplateResolver, id: string, props: Props): Delivery[] {
  const path = `AWS::SNS::Topic ${id}`;
  const feedback = Object.keys(props).filter((k) => TOPIC_FEEDBACK.test(k) || k === 'DeliveryStatusLogging');
  if (feedback.length > 0)
    throw new Error(`${path}: delivery-status logging (${feedback.join(', ')}) has no model`);
  const topicArn = resolver.arn(id);
  return list(props.Subscription).flatMap((sub, index) =>
    subscriptionDeliveries(resolver, id, topicArn, sub as Props, `${path} Subscription[${index}]`),
  );
}

export function queue(_resolver: TemplateResolver, id: string, props: Props): Delivery[] {
  if (props.RedrivePolicy !== undefined)
    throw new Error(`AWS::SQS::Queue ${id}: a redrive policy has no model`);
  return [];
}

export function logGroup(_resolver: TemplateResolver, id: string, props: Props): Delivery[] {
  // CloudWatch Logs would need the key policy to let logs.<region>.amazonaws.com use the key.
  if (props.KmsKeyId !== undefined)
    throw new Error(`AWS::Logs::LogGroup ${id}: a KMS-encrypted log group has no model`);
  return [];
}

/**
 * Step Functions delivers execution logs through CloudWatch Logs' vended-log delivery, which the
 * state machine's role sets up (https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html).
 * Its tasks are calls the role makes, not deliveries of a service into our resources.
 */
const LOG_DELIVERY_ACTIONS = [
  'logs:CreateLogDelivery',
  'logs:GetLogDelivery',
  'logs:UpdateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:DescribeResourcePolicies',
  'logs:DescribeLogGroups',
];

export function stateMachine(resolver: TemplateResolver, id: string, props: Props): Delivery[] {
  const path = `AWS::StepFunctions::StateMachine ${id} LoggingConfiguration`;
  const logging = props.LoggingConfiguration as { Destinations?: Props[] } | undefined;
  if (!logging?.Destinations?.length) return [];
  const role = roleOf(resolver, props.RoleArn, path);
  return logging.Destinations.map((destination, index) => {
    const group = (destination.CloudWatchLogsLogGroup as Props | undefined)?.LogGroupArn;
    const arn = resolver.resolveString(group, `${path}.Destinations[${index}]`);
    return delivery(
      `${path}.Destinations[${index}]`,
      'states.amazonaws.com',
      id,
      targetOf(resolver, arn, path).id,
      () => {
        const identityPolicies = identityPoliciesOf(resolver, role.id);
        return LOG_DELIVERY_ACTIONS.map((action) => ({
          label: `${role.id} ${action} (log delivery to ${arn})`,
          principal: role.arn,
          action,
          resource: '*',
          context: { 'aws:SecureTransport': 'true' },
          resourcePolicy: undefined,
          identityPolicies,
        }));
      },
    );
  });
}

/**
 * Every path by which an AWS service delivers into a resource of this stack, found by walking the
 * synthesized template (never from a list kept by hand). Each resource type either has a model
 * here, or a reason it delivers nothing; a type with neither, or a delivery inside a modelled type
 * that has no model (an alarm action that is not SNS, an HTTPS subscription...), is an error, so a
 * new kind of delivery cannot slip past the check.
 */
import { identityPoliciesOf } from '../../local/services/iam/template-policies.ts';
import type { TemplateResolver } from '../../local/services/iam/template-resolver.ts';
import {
  actionFor,
  type Check,
  type Delivery,
  delivery,
  list,
  roleChecks,
  roleOf,
  serviceChecks,
  simulate,
  targetOf,
  trustCheck,
} from './delivery-checks.ts';
import { bucket, logGroup, queue, stateMachine, subscription, topic } from './delivery-walk-more.ts';

export type { Delivery } from './delivery-checks.ts';

type Props = Record<string, unknown>;
type Model = (resolver: TemplateResolver, id: string, props: Props) => Delivery[];

/** Types that deliver nothing themselves, and why; any property that would deliver is checked. */
const DELIVERS_NOTHING: Readonly<Record<string, string>> = {
  'AWS::IAM::Role': 'a principal: checked by the deliveries that assume it',
  'AWS::IAM::Policy': 'identity policy: read by the deliveries of the roles it attaches to',
  'AWS::IAM::ManagedPolicy': 'identity policy: read by the deliveries of the roles it attaches to',
  'AWS::SNS::TopicPolicy': 'resource policy: read by every delivery to its topics',
  'AWS::SQS::QueuePolicy': 'resource policy: read by every delivery to its queues',
  'AWS::S3::BucketPolicy': 'resource policy: read by every delivery to its bucket',
  'AWS::Lambda::Permission':
    'resource policy: read by every delivery to its function (and checked for scope)',
  'AWS::KMS::Key': 'key policy: read by every delivery to a topic or queue it encrypts',
  'AWS::SSM::Parameter': 'a value; its change events come from AWS to the default bus, which needs no policy',
  'AWS::CloudWatch::Dashboard': 'a view',
  'AWS::SecretsManager::Secret': 'rotation is its RotationSchedule',
  'AWS::CDK::Metadata': 'CDK bookkeeping',
};

function toTarget(resolver: TemplateResolver, arn: string, what: string): string {
  return targetOf(resolver, arn, what).id;
}

/**
 * CloudWatch publishes alarm notifications as cloudwatch.amazonaws.com, on behalf of the alarm.
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html
 */
const alarm: Model = (resolver, id, props) => {
  const alarmArn = resolver.arn(id);
  const actions = new Set(
    ['AlarmActions', 'OKActions', 'InsufficientDataActions'].flatMap((key) =>
      list(resolver.resolve(props[key])).map((a) => String(a)),
    ),
  );
  return [...actions].map((arn) => {
    const path = `AWS::CloudWatch::Alarm ${id} action ${arn}`;
    if (!arn.includes(':sns:'))
      throw new Error(`${path}: no model of an alarm action that is not an SNS topic`);
    return delivery(path, 'cloudwatch.amazonaws.com', id, toTarget(resolver, arn, path), (problems) =>
      serviceChecks(resolver, 'cloudwatch.amazonaws.com', alarmArn, arn, path, problems),
    );
  });
};

/**
 * EventBridge delivers to SNS, SQS and Lambda through their resource policies, and to other
 * targets through the target's RoleArn; a dead-letter queue through its queue policy.
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 */
const rule: Model = (resolver, id, props) => {
  const bus = props.EventBusName === undefined ? 'default' : resolver.resolve(props.EventBusName);
  if (bus !== 'default') throw new Error(`AWS::Events::Rule ${id} is on bus ${String(bus)}: no model`);
  const ruleArn = resolver.arn(id);
  const deliveries: Delivery[] = [];
  for (const [index, raw] of list(props.Targets).entries()) {
    const target = raw as Props;
    const path = `AWS::Events::Rule ${id} Targets[${index}]`;
    const arn = resolver.resolveString(target.Arn, `${path}.Arn`);
    const to = toTarget(resolver, arn, path);
    const type = resolver.resource(to).Type;
    const byResourcePolicy = ['AWS::SNS::Topic', 'AWS::SQS::Queue', 'AWS::Lambda::Function'].includes(type);
    if (target.RoleArn !== undefined) {
      // A RoleArn on a resource-policy target makes EventBridge call as the role, which AWS warns fails
      // for encrypted SNS and SQS targets.
      if (byResourcePolicy)
        throw new Error(
          `${path}: RoleArn on a ${type} target, which EventBridge authorizes by resource policy`,
        );
      const role = roleOf(resolver, target.RoleArn, path);
      deliveries.push(
        delivery(path, 'events.amazonaws.com', id, to, () => [
          trustCheck(resolver, 'events.amazonaws.com', role, ruleArn),
          ...roleChecks(resolver, role, actionFor(type, path), arn, path),
        ]),
      );
    } else {
      if (!byResourcePolicy)
        throw new Error(`${path}: a ${type} target needs a RoleArn; no model without one`);
      deliveries.push(
        delivery(path, 'events.amazonaws.com', id, to, (problems) =>
          serviceChecks(resolver, 'events.amazonaws.com', ruleArn, arn, path, problems),
        ),
      );
    }
    const dlq = (target.DeadLetterConfig as Props | undefined)?.Arn;
    if (dlq !== undefined) {
      const dlqPath = `${path}.DeadLetterConfig`;
      const dlqArn = resolver.resolveString(dlq, dlqPath);
      deliveries.push(
        delivery(dlqPath, 'events.amazonaws.com', id, toTarget(resolver, dlqArn, dlqPath), (problems) =>
          serviceChecks(resolver, 'events.amazonaws.com', ruleArn, dlqArn, dlqPath, problems),
        ),
      );
    }
  }
  return [...deliveries, ...s3Source(resolver, id, props)];
};

/**
 * A rule on S3 events is the end of the bucket's delivery to EventBridge: S3 sends them only for a
 * bucket with EventBridge notifications on, else the rule never fires.
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/EventBridge.html
 */
function s3Source(resolver: TemplateResolver, id: string, props: Props): Delivery[] {
  const pattern = resolver.resolve(props.EventPattern) as
    | { source?: unknown[]; detail?: { bucket?: { name?: unknown[] } } }
    | undefined;
  if (!pattern?.source?.includes('aws.s3')) return [];
  const path = `AWS::Events::Rule ${id} EventPattern (aws.s3)`;
  const names = pattern.detail?.bucket?.name ?? [];
  const problems = names.flatMap((name) => {
    const bucket = Object.keys(resolver.template.Resources).find(
      (key) => resolver.resource(key).Type === 'AWS::S3::Bucket' && resolver.ref(key) === name,
    );
    const config = bucket
      ? (resolver.resource(bucket).Properties?.NotificationConfiguration as Props | undefined)
      : undefined;
    const enabled = (config?.EventBridgeConfiguration as Props | undefined)?.EventBridgeEnabled === true;
    return enabled ? [] : [`${path}: bucket ${String(name)} does not send its events to EventBridge`];
  });
  if (names.length === 0) problems.push(`${path}: matches no bucket by name; no model`);
  return [{ path, service: 's3.amazonaws.com', from: id, to: 'the default event bus', checks: [], problems }];
}

/**
 * EventBridge Scheduler assumes the schedule's execution role for the target and for the
 * dead-letter queue; its trust policy should hold aws:SourceAccount.
 * https://docs.aws.amazon.com/scheduler/latest/UserGuide/setting-up.html#setting-up-execution-role
 * https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html
 */
const schedule: Model = (resolver, id, props) => {
  const target = props.Target as Props;
  const path = `AWS::Scheduler::Schedule ${id} Target`;
  if (props.KmsKeyArn !== undefined) throw new Error(`${path}: a customer managed schedule key has no model`);
  const role = roleOf(resolver, target.RoleArn, path);
  const group = (props.GroupName as string | undefined) ?? 'default';
  const groupArn = `arn:${resolver.env.partition}:scheduler:${resolver.env.region}:${resolver.env.account}:schedule-group/${group}`;
  const arn = resolver.resolveString(target.Arn, `${path}.Arn`);
  if (arn.includes(':aws-sdk:')) throw new Error(`${path}: a universal target (${arn}) has no model`);
  const to = toTarget(resolver, arn, path);
  const deliveries = [
    delivery(path, 'scheduler.amazonaws.com', id, to, () => [
      trustCheck(resolver, 'scheduler.amazonaws.com', role, groupArn),
      ...roleChecks(resolver, role, actionFor(resolver.resource(to).Type, path), arn, path),
    ]),
  ];
  const dlq = (target.DeadLetterConfig as Props | undefined)?.Arn;
  if (dlq !== undefined) {
    const dlqPath = `${path}.DeadLetterConfig`;
    const dlqArn = resolver.resolveString(dlq, dlqPath);
    deliveries.push(
      delivery(dlqPath, 'scheduler.amazonaws.com', id, toTarget(resolver, dlqArn, dlqPath), () => [
        trustCheck(resolver, 'scheduler.amazonaws.com', role, groupArn),
        ...roleChecks(resolver, role, 'sqs:SendMessage', dlqArn, dlqPath),
      ]),
    );
  }
  return deliveries;
};

/**
 * Secrets Manager invokes the rotation function as secretsmanager.amazonaws.com, through the
 * function's resource policy, on behalf of the secret.
 * https://docs.aws.amazon.com/secretsmanager/latest/userguide/rotating-secrets-required-permissions-function.html
 */
const rotation: Model = (resolver, id, props) => {
  const path = `AWS::SecretsManager::RotationSchedule ${id}`;
  if (props.HostedRotationLambda !== undefined)
    throw new Error(`${path}: a hosted rotation function has no model`);
  if (props.RotationLambdaARN === undefined) return [];
  const secretArn = resolver.resolveString(props.SecretId, `${path}.SecretId`);
  const fn = resolver.resolveString(props.RotationLambdaARN, `${path}.RotationLambdaARN`);
  return [
    delivery(path, 'secretsmanager.amazonaws.com', id, toTarget(resolver, fn, path), (problems) =>
      serviceChecks(resolver, 'secretsmanager.amazonaws.com', secretArn, fn, path, problems),
    ),
  ];
};

/** The function's execution role: what Lambda acts as for destinations, DLQs and logs. */
function functionRole(resolver: TemplateResolver, functionRef: string, what: string) {
  const fnId = targetOf(
    resolver,
    functionRef.startsWith('arn:')
      ? functionRef
      : `arn:${resolver.env.partition}:lambda:${resolver.env.region}:${resolver.env.account}:function:${functionRef}`,
    what,
  ).id;
  return { fnId, role: roleOf(resolver, resolver.resource(fnId).Properties?.Role, what) };
}

/**
 * Lambda sends an asynchronous invocation's record to its destination with the function's
 * execution role. https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
const invokeConfig: Model = (resolver, id, props) => {
  const path = `AWS::Lambda::EventInvokeConfig ${id}`;
  const { role } = functionRole(
    resolver,
    resolver.resolveString(props.FunctionName, `${path}.FunctionName`),
    path,
  );
  const destinations = (props.DestinationConfig as Props | undefined) ?? {};
  return ['OnFailure', 'OnSuccess'].flatMap((when) => {
    const raw = (destinations[when] as Props | undefined)?.Destination;
    if (raw === undefined) return [];
    const where = `${path} ${when}`;
    const arn = resolver.resolveString(raw, where);
    const to = toTarget(resolver, arn, where);
    return [
      delivery(where, 'lambda.amazonaws.com', id, to, () =>
        roleChecks(resolver, role, actionFor(resolver.resource(to).Type, where), arn, where),
      ),
    ];
  });
};

/**
 * A function's own dead-letter queue (written with its role) and its log group (the role writes
 * its streams). https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
 */
const lambdaFunction: Model = (resolver, id, props) => {
  const path = `AWS::Lambda::Function ${id}`;
  const role = roleOf(resolver, props.Role, path);
  const deliveries: Delivery[] = [];
  const dlq = (props.DeadLetterConfig as Props | undefined)?.TargetArn;
  if (dlq !== undefined) {
    const where = `${path} DeadLetterConfig`;
    const arn = resolver.resolveString(dlq, where);
    const to = toTarget(resolver, arn, where);
    deliveries.push(
      delivery(where, 'lambda.amazonaws.com', id, to, () =>
        roleChecks(resolver, role, actionFor(resolver.resource(to).Type, where), arn, where),
      ),
    );
  }
  const logGroup = (props.LoggingConfig as Props | undefined)?.LogGroup;
  const groupName =
    logGroup === undefined
      ? `/aws/lambda/${resolver.ref(id)}`
      : resolver.resolveString(logGroup, `${path} LoggingConfig.LogGroup`);
  const stream = `arn:${resolver.env.partition}:logs:${resolver.env.region}:${resolver.env.account}:log-group:${groupName}:log-stream:2026/01/01/[$LATEST]0123456789abcdef`;
  const logChecks = (): Check[] => {
    const identityPolicies = identityPoliciesOf(resolver, role.id);
    return ['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => ({
      label: `${role.id} ${action} on log group ${groupName}`,
      principal: role.arn,
      action,
      resource: stream,
      context: { 'aws:SecureTransport': 'true' },
      resourcePolicy: undefined,
      identityPolicies,
    }));
  };
  deliveries.push(delivery(`${path} LoggingConfig`, 'lambda.amazonaws.com', id, groupName, logChecks));
  return deliveries;
};

const MODELS: Readonly<Record<string, Model>> = {
  'AWS::CloudWatch::Alarm': alarm,
  'AWS::Events::Rule': rule,
  'AWS::Scheduler::Schedule': schedule,
  'AWS::SecretsManager::RotationSchedule': rotation,
  'AWS::Lambda::EventInvokeConfig': invokeConfig,
  'AWS::Lambda::Function': lambdaFunction,
  'AWS::S3::Bucket': bucket,
  'AWS::SNS::Topic': topic,
  'AWS::SNS::Subscription': subscription,
  'AWS::SQS::Queue': queue,
  'AWS::Logs::LogGroup': logGroup,
  'AWS::StepFunctions::StateMachine': stateMachine,
};

/** Every delivery the template configures; an error for any it cannot model. */
export function walkDeliveries(resolver: TemplateResolver): Delivery[] {
  const deliveries: Delivery[] = [];
  const unmodelled: string[] = [];
  for (const [id, resource] of Object.entries(resolver.template.Resources)) {
    const model = MODELS[resource.Type];
    if (model) deliveries.push(...model(resolver, id, resource.Properties ?? {}));
    else if (!(resource.Type in DELIVERS_NOTHING)) unmodelled.push(`${resource.Type} (${id})`);
  }
  if (unmodelled.length > 0)
    throw new Error(
      `no delivery model for ${unmodelled.join(', ')}: add one to test/stack/delivery-walk.ts, or say why it delivers nothing`,
    );
  return deliveries;
}

export interface Verdicts {
  /** Requests a delivery needs that IAM would not allow. */
  readonly denied: string[];
  /** Requests still allowed when made on behalf of another account's source. */
  readonly unscoped: string[];
  readonly problems: string[];
}

/** Simulates every check of every delivery, in the resolver's account. */
export async function evaluateDeliveries(
  resolver: TemplateResolver,
  deliveries: readonly Delivery[],
): Promise<Verdicts> {
  const verdicts: Verdicts = { denied: [], unscoped: [], problems: [] };
  for (const d of deliveries) {
    verdicts.problems.push(...d.problems);
    for (const check of d.checks) {
      const decision = await simulate(check, check.context, resolver.env.account);
      if (decision !== 'Allowed') verdicts.denied.push(`${d.path}: ${check.label}: ${decision}`);
      if (
        check.foreignContext &&
        (await simulate(check, check.foreignContext, resolver.env.account)) === 'Allowed'
      )
        verdicts.unscoped.push(
          `${d.path}: ${check.label}: allowed for ${check.foreignContext['aws:SourceArn']}`,
        );
    }
  }
  return verdicts;
}

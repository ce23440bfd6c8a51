/**
 * What each CloudFormation resource type returns for Ref and Fn::GetAtt, and its ARN, given its
 * physical name: the model behind template-resolver.ts.
 */
import { createHash } from 'node:crypto';

/** The account, region, partition and stack a template is resolved in. */
export interface ResolverEnvironment {
  readonly account: string;
  readonly region: string;
  readonly partition: string;
  readonly stackName: string;
  /** Values of template parameters; otherwise a parameter's Default (SSM-typed ones have none). */
  readonly parameters?: Readonly<Record<string, string>>;
}

export interface Named {
  readonly name: string;
  readonly env: ResolverEnvironment;
  readonly properties: Record<string, unknown>;
}

export interface TypeModel {
  /** The property that sets the physical name, when the template may set it. */
  readonly nameProperty?: string;
  /** Lower-case generated names (S3 bucket names must be). */
  readonly lowerCase?: boolean;
  /** What Ref returns. */
  readonly ref: 'name' | 'arn' | ((n: Named) => string);
  readonly arn?: (n: Named) => string;
  readonly attributes?: Readonly<Record<string, (n: Named) => string>>;
}

const arnIn = (service: string, resource: string, { env }: Named, global = false): string =>
  `arn:${env.partition}:${service}:${global ? '' : env.region}:${env.account}:${resource}`;

/** A stable hex digest of the name, for the random parts of AWS identifiers (key IDs, suffixes). */
const digest = (name: string, length: number): string =>
  createHash('sha256').update(name).digest('hex').slice(0, length);

/** Opaque-ID resources: Ref is an ID, they have no ARN and no attributes we model. */
const OPAQUE: TypeModel = { ref: 'name' };

// Ref and Fn::GetAtt return values per type: the "Return values" section of each resource's page
// in the CloudFormation template reference,
// https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-template-resource-type-ref.html
export const TYPES: Readonly<Record<string, TypeModel>> = {
  'AWS::Lambda::Function': {
    nameProperty: 'FunctionName',
    ref: 'name',
    arn: (n) => arnIn('lambda', `function:${n.name}`, n),
  },
  'AWS::SNS::Topic': {
    nameProperty: 'TopicName',
    ref: 'arn',
    arn: (n) => arnIn('sns', n.name, n),
    attributes: { TopicName: (n) => n.name },
  },
  'AWS::SQS::Queue': {
    nameProperty: 'QueueName',
    ref: (n) => `https://sqs.${n.env.region}.amazonaws.com/${n.env.account}/${n.name}`,
    arn: (n) => arnIn('sqs', n.name, n),
    attributes: {
      QueueName: (n) => n.name,
      QueueUrl: (n) => `https://sqs.${n.env.region}.amazonaws.com/${n.env.account}/${n.name}`,
    },
  },
  'AWS::IAM::Role': {
    nameProperty: 'RoleName',
    ref: 'name',
    arn: (n) => arnIn('iam', `role${(n.properties.Path as string | undefined) ?? '/'}${n.name}`, n, true),
    attributes: { RoleId: (n) => `AROA${digest(n.name, 17).toUpperCase()}` },
  },
  'AWS::S3::Bucket': {
    nameProperty: 'BucketName',
    lowerCase: true,
    ref: 'name',
    arn: (n) => `arn:${n.env.partition}:s3:::${n.name}`,
    attributes: {
      DomainName: (n) => `${n.name}.s3.amazonaws.com`,
      RegionalDomainName: (n) => `${n.name}.s3.${n.env.region}.amazonaws.com`,
    },
  },
  'AWS::KMS::Key': {
    ref: (n) => keyId(n.name),
    arn: (n) => arnIn('kms', `key/${keyId(n.name)}`, n),
    attributes: { KeyId: (n) => keyId(n.name) },
  },
  'AWS::Events::Rule': {
    nameProperty: 'Name',
    ref: 'name',
    arn: (n) => {
      const bus = n.properties.EventBusName;
      return arnIn(
        'events',
        `rule/${typeof bus === 'string' && bus !== 'default' ? `${bus}/` : ''}${n.name}`,
        n,
      );
    },
  },
  'AWS::Events::EventBus': {
    nameProperty: 'Name',
    ref: 'name',
    arn: (n) => arnIn('events', `event-bus/${n.name}`, n),
    attributes: { Name: (n) => n.name },
  },
  'AWS::Scheduler::Schedule': {
    nameProperty: 'Name',
    ref: 'name',
    arn: (n) =>
      arnIn(
        'scheduler',
        `schedule/${(n.properties.GroupName as string | undefined) ?? 'default'}/${n.name}`,
        n,
      ),
  },
  'AWS::Scheduler::ScheduleGroup': {
    nameProperty: 'Name',
    ref: 'name',
    arn: (n) => arnIn('scheduler', `schedule-group/${n.name}`, n),
  },
  'AWS::SecretsManager::Secret': {
    nameProperty: 'Name',
    ref: 'arn',
    arn: (n) => secretArn(n.env, n.name),
    attributes: { Id: (n) => secretArn(n.env, n.name) },
  },
  'AWS::Logs::LogGroup': {
    nameProperty: 'LogGroupName',
    ref: 'name',
    // The Arn attribute of a log group ends in ":*" (it covers the group's streams).
    arn: (n) => arnIn('logs', `log-group:${n.name}:*`, n),
  },
  'AWS::StepFunctions::StateMachine': {
    nameProperty: 'StateMachineName',
    ref: 'arn',
    arn: (n) => arnIn('states', `stateMachine:${n.name}`, n),
    attributes: { Name: (n) => n.name },
  },
  'AWS::SSM::Parameter': {
    nameProperty: 'Name',
    ref: 'name',
    arn: (n) => arnIn('ssm', `parameter/${n.name.replace(/^\//, '')}`, n),
  },
  'AWS::CloudWatch::Alarm': {
    nameProperty: 'AlarmName',
    ref: 'name',
    arn: (n) => arnIn('cloudwatch', `alarm:${n.name}`, n),
  },
  'AWS::CloudWatch::Dashboard': { nameProperty: 'DashboardName', ref: 'name' },
  'AWS::IAM::Policy': OPAQUE,
  'AWS::IAM::ManagedPolicy': {
    nameProperty: 'ManagedPolicyName',
    ref: 'arn',
    arn: (n) => arnIn('iam', `policy/${n.name}`, n, true),
  },
  'AWS::SNS::TopicPolicy': OPAQUE,
  'AWS::SNS::Subscription': OPAQUE,
  'AWS::SQS::QueuePolicy': OPAQUE,
  'AWS::S3::BucketPolicy': OPAQUE,
  'AWS::Lambda::Permission': OPAQUE,
  'AWS::Lambda::EventInvokeConfig': OPAQUE,
  'AWS::SecretsManager::RotationSchedule': OPAQUE,
  'AWS::CDK::Metadata': OPAQUE,
};

/**
 * The ARN of the secret named `name`: it ends in a hyphen and six random characters, here a digest
 * of the name, so a secret named in a request resolves to the same ARN as the template's.
 */
export function secretArn(
  env: Pick<ResolverEnvironment, 'partition' | 'region' | 'account'>,
  name: string,
): string {
  return `arn:${env.partition}:secretsmanager:${env.region}:${env.account}:secret:${name}-${digest(name, 6)}`;
}

/** A KMS key ID is a UUID. */
export function keyId(name: string): string {
  const h = digest(name, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

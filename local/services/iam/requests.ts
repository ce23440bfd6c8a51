/**
 * What AWS authorizes for each SDK command the handlers send: IAM action(s), the resource ARN and the
 * request's own condition keys. IAM speaks actions, not API names: HeadObject is s3:GetObject,
 * ListObjectsV2 is s3:ListBucket with s3:prefix, CopyObject is two checks (read the source, write the
 * destination), and lib-storage's multipart calls are s3:PutObject.
 *
 * Sources: "Required permissions for Amazon S3 API operations"
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/using-with-s3-policy-actions.html), "Amazon S3
 * condition key examples" (s3:prefix, s3:delimiter, s3:max-keys), and the Service Authorization
 * Reference of each service (https://docs.aws.amazon.com/service-authorization/latest/reference/),
 * which iam-simulate's iam-data package encodes and validates these requests against.
 */

import { secretArn } from './resource-types.ts';

export interface AuthorizationRequest {
  /** `service:Action`, as IAM names it. */
  readonly action: string;
  readonly resource: string;
  /** The request's own condition keys (principal and transport keys are added by the evaluator). */
  readonly context: Readonly<Record<string, string | string[]>>;
}

/** How the local stand-ins' names map onto the deployed stack's resources. */
export interface ResourceNaming {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  /** The deployed bucket a local bucket name stands for (unknown names stay as they are). */
  bucket(name: string): string;
  /** The deployed secret's ARN a local secret id (name or ARN) stands for. */
  secret(id: string): string;
}

type Input = Readonly<Record<string, unknown>>;

export class UnmappedCommandError extends Error {
  constructor(service: string, command: string) {
    super(
      `the IAM evaluator has no mapping for ${service} ${command}: add the IAM action, resource and condition keys it needs in local/services/iam/requests.ts`,
    );
    this.name = 'UnmappedCommandError';
  }
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function s3Requests(command: string, input: Input, naming: ResourceNaming): AuthorizationRequest[] {
  const bucket = naming.bucket(String(input.Bucket));
  const bucketArn = `arn:${naming.partition}:s3:::${bucket}`;
  const objectArn = `${bucketArn}/${String(input.Key)}`;
  const versionId = str(input.VersionId);
  const versioned = (action: string, ifVersion: string) => (versionId ? ifVersion : action);
  const withVersion: Record<string, string> = versionId ? { 's3:versionid': versionId } : {};
  const object = (action: string, context: Record<string, string> = {}): AuthorizationRequest => ({
    action,
    resource: objectArn,
    context,
  });
  const write = (): AuthorizationRequest[] => {
    const sse = str(input.ServerSideEncryption);
    return [object('s3:PutObject', sse ? { 's3:x-amz-server-side-encryption': sse } : {})];
  };
  switch (command) {
    case 'PutObjectCommand':
    case 'CompleteMultipartUploadCommand':
      // A write conditioned on the current object's ETag (If-Match) also needs to read it, as the
      // least-privilege recorder derives (test/local/iam-recorder.ts).
      return input.IfMatch === undefined ? write() : [...write(), object('s3:GetObject')];
    case 'CreateMultipartUploadCommand':
    case 'UploadPartCommand':
      return write();
    case 'AbortMultipartUploadCommand':
      return [object('s3:AbortMultipartUpload')];
    case 'ListPartsCommand':
      return [object('s3:ListMultipartUploadParts')];
    case 'GetObjectCommand':
    case 'HeadObjectCommand':
      return [object(versioned('s3:GetObject', 's3:GetObjectVersion'), withVersion)];
    case 'GetObjectTaggingCommand':
      return [object(versioned('s3:GetObjectTagging', 's3:GetObjectVersionTagging'), withVersion)];
    case 'PutObjectTaggingCommand':
      return [object(versioned('s3:PutObjectTagging', 's3:PutObjectVersionTagging'), withVersion)];
    case 'DeleteObjectCommand':
      return [object(versioned('s3:DeleteObject', 's3:DeleteObjectVersion'), withVersion)];
    case 'DeleteObjectsCommand': {
      const objects = (input.Delete as { Objects?: { Key?: string; VersionId?: string }[] })?.Objects ?? [];
      return objects.map(
        (o): AuthorizationRequest => ({
          action: o.VersionId ? 's3:DeleteObjectVersion' : 's3:DeleteObject',
          resource: `${bucketArn}/${String(o.Key)}`,
          context: o.VersionId ? { 's3:versionid': o.VersionId } : {},
        }),
      );
    }
    case 'CopyObjectCommand':
    // A multipart copy's part is the same two checks as a whole-object copy.
    case 'UploadPartCopyCommand': {
      // `bucket/key[?versionId=v]`, key URL-encoded: reading the source is checked on the source
      // object (GetObjectVersion when a version is named), writing on the destination. s3rver returns
      // no version ids, so local copies name none and are checked as s3:GetObject; in the versioned
      // deployed buckets they name one (the least-privilege tests derive s3:GetObjectVersion for it).
      const [path = '', query = ''] = String(input.CopySource).replace(/^\//, '').split('?');
      const slash = path.indexOf('/');
      const sourceBucket = naming.bucket(decodeURIComponent(path.slice(0, slash)));
      const sourceKey = decodeURIComponent(path.slice(slash + 1));
      const sourceVersion = new URLSearchParams(query).get('versionId');
      const copyContext: Record<string, string> = { 's3:x-amz-copy-source': `${sourceBucket}/${sourceKey}` };
      const metadataDirective = str(input.MetadataDirective);
      if (metadataDirective) copyContext['s3:x-amz-metadata-directive'] = metadataDirective;
      const read: AuthorizationRequest = {
        action: sourceVersion ? 's3:GetObjectVersion' : 's3:GetObject',
        resource: `arn:${naming.partition}:s3:::${sourceBucket}/${sourceKey}`,
        context: sourceVersion ? { 's3:versionid': sourceVersion } : {},
      };
      return [read, ...write().map((put) => ({ ...put, context: { ...put.context, ...copyContext } }))];
    }
    case 'ListObjectsV2Command':
    case 'ListObjectsCommand':
    case 'HeadBucketCommand': {
      // A request without a prefix is checked with an empty s3:prefix, which `scans/*` does not match.
      const context: Record<string, string> = { 's3:prefix': str(input.Prefix) ?? '' };
      if (str(input.Delimiter)) context['s3:delimiter'] = String(input.Delimiter);
      if (input.MaxKeys !== undefined) context['s3:max-keys'] = String(input.MaxKeys);
      return [
        {
          action: 's3:ListBucket',
          resource: bucketArn,
          context: command === 'HeadBucketCommand' ? {} : context,
        },
      ];
    }
    case 'ListObjectVersionsCommand':
      return [
        {
          action: 's3:ListBucketVersions',
          resource: bucketArn,
          context: { 's3:prefix': str(input.Prefix) ?? '' },
        },
      ];
    default:
      throw new UnmappedCommandError('S3', command);
  }
}

function secretsManagerRequests(
  command: string,
  input: Input,
  naming: ResourceNaming,
): AuthorizationRequest[] {
  const action = `secretsmanager:${command.replace(/Command$/, '')}`;
  if (command === 'CreateSecretCommand') {
    const name = String(input.Name);
    return [
      {
        action,
        resource: secretArn(naming, name),
        context: { 'secretsmanager:Name': name },
      },
    ];
  }
  if (!('SecretId' in input)) throw new UnmappedCommandError('Secrets Manager', command);
  const arn = naming.secret(String(input.SecretId));
  const context: Record<string, string> = { 'secretsmanager:SecretId': arn };
  const stage = str(input.VersionStage);
  if (stage) context['secretsmanager:VersionStage'] = stage;
  const version = str(input.VersionId);
  if (version) context['secretsmanager:VersionId'] = version;
  return [{ action, resource: arn, context }];
}

/** arn:…:sqs:region:account:name from https://sqs.region.amazonaws.com/account/name. */
function queueArn(url: string, naming: ResourceNaming): string {
  const parsed = new URL(url);
  const [account = naming.account, name = ''] = parsed.pathname.split('/').filter(Boolean);
  const region = /sqs\.([a-z0-9-]+)\./.exec(parsed.hostname)?.[1] ?? naming.region;
  return `arn:${naming.partition}:sqs:${region}:${account}:${name}`;
}

function stateMachineRequests(command: string, input: Input): AuthorizationRequest[] {
  const action = `states:${command.replace(/Command$/, '')}`;
  switch (command) {
    case 'StartExecutionCommand':
    case 'ListExecutionsCommand':
    case 'DescribeStateMachineCommand':
      return [{ action, resource: String(input.stateMachineArn), context: {} }];
    case 'SendTaskSuccessCommand':
      // No resource type in the Service Authorization Reference: authorized on "*".
      return [{ action, resource: '*', context: {} }];
    case 'DescribeExecutionCommand':
    case 'StopExecutionCommand':
    case 'GetExecutionHistoryCommand':
      return [{ action, resource: String(input.executionArn), context: {} }];
    default:
      throw new UnmappedCommandError('Step Functions', command);
  }
}

/**
 * The requests AWS authorizes for `command` sent by a client of `clientName` (the SDK's
 * `context.clientName`, e.g. `S3Client`). A command without a mapping is an error, never a pass.
 */
export function authorizationRequests(
  clientName: string,
  command: string,
  input: Input,
  naming: ResourceNaming,
): AuthorizationRequest[] {
  const arn = (service: string, rest: string) =>
    `arn:${naming.partition}:${service}:${naming.region}:${naming.account}:${rest}`;
  switch (clientName) {
    case 'S3Client':
      return s3Requests(command, input, naming);
    case 'SecretsManagerClient':
      return secretsManagerRequests(command, input, naming);
    case 'SFNClient':
      return stateMachineRequests(command, input);
    case 'EventBridgeClient': {
      if (command !== 'PutEventsCommand') throw new UnmappedCommandError('EventBridge', command);
      // One check per entry, on the bus it names (default when none), with its source and detail type.
      const entries =
        (input.Entries as { Source?: string; DetailType?: string; EventBusName?: string }[]) ?? [];
      return entries.map((entry) => {
        const bus = entry.EventBusName ?? 'default';
        return {
          action: 'events:PutEvents',
          resource: bus.startsWith('arn:') ? bus : arn('events', `event-bus/${bus}`),
          context: { 'events:source': entry.Source ?? '', 'events:detail-type': entry.DetailType ?? '' },
        };
      });
    }
    case 'SQSClient': {
      const action = `sqs:${command.replace(/Command$/, '')}`;
      if (command === 'GetQueueUrlCommand') {
        return [{ action, resource: arn('sqs', String(input.QueueName)), context: {} }];
      }
      if (!('QueueUrl' in input)) throw new UnmappedCommandError('SQS', command);
      return [{ action, resource: queueArn(String(input.QueueUrl), naming), context: {} }];
    }
    case 'SSMClient': {
      if (command !== 'GetParameterCommand' && command !== 'GetParametersCommand') {
        throw new UnmappedCommandError('SSM', command);
      }
      const names = command === 'GetParameterCommand' ? [String(input.Name)] : (input.Names as string[]);
      return names.map((name) => ({
        action: `ssm:${command.replace(/Command$/, '')}`,
        resource: name.startsWith('arn:') ? name : arn('ssm', `parameter/${name.replace(/^\//, '')}`),
        context: {},
      }));
    }
    case 'LambdaClient': {
      if (command !== 'InvokeCommand') throw new UnmappedCommandError('Lambda', command);
      const name = String(input.FunctionName);
      return [
        {
          action: 'lambda:InvokeFunction',
          resource: name.startsWith('arn:') ? name : arn('lambda', `function:${name}`),
          context: {},
        },
      ];
    }
    case 'KMSClient': {
      const key = String(input.KeyId);
      return [
        {
          action: `kms:${command.replace(/Command$/, '')}`,
          resource: key.startsWith('arn:') ? key : arn('kms', `key/${key}`),
          context: {},
        },
      ];
    }
    default:
      throw new UnmappedCommandError(clientName, command);
  }
}

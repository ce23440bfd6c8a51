/**
 * Each SDK command the handlers send, mapped to the IAM action, resource ARN and condition keys AWS
 * authorizes for it (local/services/iam/requests.ts), and a check that no command the handlers send is left
 * without a mapping.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type AuthorizationRequest,
  authorizationRequests,
  type ResourceNaming,
} from '../../local/services/iam/requests.ts';

const naming: ResourceNaming = {
  partition: 'aws',
  region: 'eu-west-1',
  account: '111122223333',
  bucket: (name) => (name === 'pipeline-results' ? 'deployed-results' : name),
  secret: (id) => `arn:aws:secretsmanager:eu-west-1:111122223333:secret:${id}-AbCdEf`,
};
const OBJ = 'arn:aws:s3:::deployed-results/scans/a.example.com/report.json';
const BUCKET = 'arn:aws:s3:::deployed-results';
const SECRET = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:org-key-AbCdEf';
const put = { Bucket: 'pipeline-results', Key: 'scans/a.example.com/report.json' };

/** [client, command, input, what AWS authorizes]. */
const TABLE: [string, string, Record<string, unknown>, AuthorizationRequest[]][] = [
  ['S3Client', 'PutObjectCommand', put, [{ action: 's3:PutObject', resource: OBJ, context: {} }]],
  // lib-storage's multipart upload: every part is a write of the object.
  ['S3Client', 'CreateMultipartUploadCommand', put, [{ action: 's3:PutObject', resource: OBJ, context: {} }]],
  ['S3Client', 'UploadPartCommand', put, [{ action: 's3:PutObject', resource: OBJ, context: {} }]],
  [
    'S3Client',
    'CompleteMultipartUploadCommand',
    put,
    [{ action: 's3:PutObject', resource: OBJ, context: {} }],
  ],
  [
    'S3Client',
    'AbortMultipartUploadCommand',
    put,
    [{ action: 's3:AbortMultipartUpload', resource: OBJ, context: {} }],
  ],
  ['S3Client', 'GetObjectCommand', put, [{ action: 's3:GetObject', resource: OBJ, context: {} }]],
  ['S3Client', 'HeadObjectCommand', put, [{ action: 's3:GetObject', resource: OBJ, context: {} }]],
  [
    'S3Client',
    'GetObjectCommand',
    { ...put, VersionId: 'v1' },
    [{ action: 's3:GetObjectVersion', resource: OBJ, context: { 's3:versionid': 'v1' } }],
  ],
  [
    'S3Client',
    'PutObjectTaggingCommand',
    { ...put, VersionId: 'v1' },
    [{ action: 's3:PutObjectVersionTagging', resource: OBJ, context: { 's3:versionid': 'v1' } }],
  ],
  ['S3Client', 'DeleteObjectCommand', put, [{ action: 's3:DeleteObject', resource: OBJ, context: {} }]],
  [
    'S3Client',
    'DeleteObjectsCommand',
    { Bucket: put.Bucket, Delete: { Objects: [{ Key: put.Key }, { Key: 'scans/b', VersionId: 'v2' }] } },
    [
      { action: 's3:DeleteObject', resource: OBJ, context: {} },
      {
        action: 's3:DeleteObjectVersion',
        resource: `${BUCKET}/scans/b`,
        context: { 's3:versionid': 'v2' },
      },
    ],
  ],
  [
    'S3Client',
    'ListObjectsV2Command',
    { Bucket: 'pipeline-results', Prefix: 'scans/a.example.com/', MaxKeys: 100 },
    [
      {
        action: 's3:ListBucket',
        resource: BUCKET,
        context: { 's3:prefix': 'scans/a.example.com/', 's3:max-keys': '100' },
      },
    ],
  ],
  // CopyObject is two checks: read the (decoded) source, write the destination.
  [
    'S3Client',
    'CopyObjectCommand',
    {
      ...put,
      CopySource: 'pipeline-results/scans/a.example.com/.staging/r%20x.json?versionId=v2',
      MetadataDirective: 'REPLACE',
    },
    [
      {
        action: 's3:GetObjectVersion',
        resource: 'arn:aws:s3:::deployed-results/scans/a.example.com/.staging/r x.json',
        context: { 's3:versionid': 'v2' },
      },
      {
        action: 's3:PutObject',
        resource: OBJ,
        context: {
          's3:x-amz-copy-source': 'deployed-results/scans/a.example.com/.staging/r x.json',
          's3:x-amz-metadata-directive': 'REPLACE',
        },
      },
    ],
  ],
  // The promotion of a staged output: a multipart copy (each part two checks, like CopyObject), then
  // a completion conditioned on the current object (If-Match also reads it).
  [
    'S3Client',
    'UploadPartCopyCommand',
    { ...put, CopySource: 'pipeline-results/scans/a.example.com/.staging/r.json?versionId=v3' },
    [
      {
        action: 's3:GetObjectVersion',
        resource: 'arn:aws:s3:::deployed-results/scans/a.example.com/.staging/r.json',
        context: { 's3:versionid': 'v3' },
      },
      {
        action: 's3:PutObject',
        resource: OBJ,
        context: { 's3:x-amz-copy-source': 'deployed-results/scans/a.example.com/.staging/r.json' },
      },
    ],
  ],
  [
    'S3Client',
    'CompleteMultipartUploadCommand',
    { ...put, IfMatch: '"etag"' },
    [
      { action: 's3:PutObject', resource: OBJ, context: {} },
      { action: 's3:GetObject', resource: OBJ, context: {} },
    ],
  ],
  [
    'SecretsManagerClient',
    'GetSecretValueCommand',
    { SecretId: 'org-key', VersionStage: 'AWSPENDING' },
    [
      {
        action: 'secretsmanager:GetSecretValue',
        resource: SECRET,
        context: { 'secretsmanager:SecretId': SECRET, 'secretsmanager:VersionStage': 'AWSPENDING' },
      },
    ],
  ],
  ...(['DescribeSecret', 'PutSecretValue', 'UpdateSecretVersionStage'] as const).map(
    (api): [string, string, Record<string, unknown>, AuthorizationRequest[]] => [
      'SecretsManagerClient',
      `${api}Command`,
      { SecretId: 'org-key' },
      [{ action: `secretsmanager:${api}`, resource: SECRET, context: { 'secretsmanager:SecretId': SECRET } }],
    ],
  ),
  // SendTaskSuccess has no resource type in the Service Authorization Reference: "*".
  [
    'SFNClient',
    'SendTaskSuccessCommand',
    { taskToken: 't', output: '{}' },
    [{ action: 'states:SendTaskSuccess', resource: '*', context: {} }],
  ],
  [
    'SFNClient',
    'StartExecutionCommand',
    { stateMachineArn: 'arn:aws:states:eu-west-1:111122223333:stateMachine:List', name: 'run' },
    [
      {
        action: 'states:StartExecution',
        resource: 'arn:aws:states:eu-west-1:111122223333:stateMachine:List',
        context: {},
      },
    ],
  ],
  [
    'SFNClient',
    'DescribeExecutionCommand',
    { executionArn: 'arn:aws:states:eu-west-1:111122223333:execution:Scan:x' },
    [
      {
        action: 'states:DescribeExecution',
        resource: 'arn:aws:states:eu-west-1:111122223333:execution:Scan:x',
        context: {},
      },
    ],
  ],
  [
    'EventBridgeClient',
    'PutEventsCommand',
    { Entries: [{ Source: 'security-pipeline', DetailType: 'RunFinished', Detail: '{}' }] },
    [
      {
        action: 'events:PutEvents',
        resource: 'arn:aws:events:eu-west-1:111122223333:event-bus/default',
        context: { 'events:source': 'security-pipeline', 'events:detail-type': 'RunFinished' },
      },
    ],
  ],
  ...(['ReceiveMessage', 'DeleteMessage'] as const).map(
    (api): [string, string, Record<string, unknown>, AuthorizationRequest[]] => [
      'SQSClient',
      `${api}Command`,
      { QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111122223333/held-starts' },
      [{ action: `sqs:${api}`, resource: 'arn:aws:sqs:eu-west-1:111122223333:held-starts', context: {} }],
    ],
  ),
  [
    'SSMClient',
    'GetParameterCommand',
    { Name: '/pipeline/pause' },
    [
      {
        action: 'ssm:GetParameter',
        resource: 'arn:aws:ssm:eu-west-1:111122223333:parameter/pipeline/pause',
        context: {},
      },
    ],
  ],
  [
    'LambdaClient',
    'InvokeCommand',
    { FunctionName: 'start-domain-list' },
    [
      {
        action: 'lambda:InvokeFunction',
        resource: 'arn:aws:lambda:eu-west-1:111122223333:function:start-domain-list',
        context: {},
      },
    ],
  ],
];

/** Which SDK client sends the commands each module exports. */
const CLIENT_OF_MODULE: Record<string, string> = {
  '@aws-sdk/client-s3': 'S3Client',
  '@aws-sdk/client-secrets-manager': 'SecretsManagerClient',
  '@aws-sdk/client-sfn': 'SFNClient',
  '@aws-sdk/client-eventbridge': 'EventBridgeClient',
  '@aws-sdk/client-sqs': 'SQSClient',
  '@aws-sdk/client-lambda': 'LambdaClient',
  '@aws-sdk/client-ssm': 'SSMClient',
};

async function handlerSources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  const files = entries.filter((f) => f.endsWith('.ts')).map((f) => join(dir, f));
  return Promise.all(files.map((f) => readFile(f, 'utf8')));
}

describe('SDK command -> IAM request (local/services/iam/requests.ts)', () => {
  it.each(TABLE.map((row) => [`${row[0]} ${row[1]}`, ...row] as const))(
    '%s',
    (_, client, command, input, expected) => {
      expect(authorizationRequests(client, command, input, naming)).toEqual(expected);
    },
  );

  it('maps every command the handlers send (lambdas/), and lib-storage and Powertools send for them', async () => {
    const sent = new Set<string>([
      'S3Client CreateMultipartUploadCommand',
      'S3Client UploadPartCommand',
      'S3Client CompleteMultipartUploadCommand',
      'S3Client AbortMultipartUploadCommand',
      'S3Client ListObjectsV2Command',
      'SSMClient GetParameterCommand',
    ]);
    for (const source of await handlerSources(new URL('../../lambdas', import.meta.url).pathname)) {
      for (const [, names, module] of source.matchAll(
        /import\s*\{([^}]*)\}\s*from\s*'(@aws-sdk\/client-[\w-]+)'/g,
      )) {
        for (const name of (names ?? '').split(',').map((n) => n.trim().replace(/^type\s+/, ''))) {
          if (name.endsWith('Command') && source.includes(`new ${name}(`)) {
            sent.add(`${CLIENT_OF_MODULE[module ?? '']} ${name}`);
          }
        }
      }
    }
    const mapped = new Set(TABLE.map(([client, command]) => `${client} ${command}`));
    expect([...sent].filter((call) => !mapped.has(call)).sort()).toEqual([]);
    expect(sent.size).toBeGreaterThan(15);
  });

  it('refuses a command it has no mapping for, naming it and where to add one', () => {
    expect(() =>
      authorizationRequests('S3Client', 'PutBucketPolicyCommand', { Bucket: 'b' }, naming),
    ).toThrow(/no mapping for S3 PutBucketPolicyCommand.*local\/services\/iam\/requests\.ts/);
  });
});

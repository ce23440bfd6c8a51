/**
 * The IAM evaluator's parts, without a run: each SDK command the handlers send mapped to the action,
 * resource and condition keys AWS authorizes; the template resolver; and the decisions and errors
 * of the evaluator itself over a small hand-written view.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAs } from '../../local/iam/attribution.ts';
import { AccessDeniedError, createIamEvaluator } from '../../local/iam/evaluator.ts';
import {
  type AuthorizationRequest,
  authorizationRequests,
  type ResourceNaming,
} from '../../local/iam/requests.ts';
import { LOCAL_STACK } from '../../local/iam/resolve.ts';
import { type IamView, iamViewOf } from '../../local/iam/view.ts';

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

describe('SDK command -> IAM request (local/iam/requests.ts)', () => {
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
    ).toThrow(/no mapping for S3 PutBucketPolicyCommand.*local\/iam\/requests\.ts/);
  });
});

describe('template resolution (local/iam/view.ts)', () => {
  it('resolves Ref, GetAtt, Join, Sub and Select/Split in role and resource policies to concrete ARNs', () => {
    const view = iamViewOf({
      Resources: {
        Results: { Type: 'AWS::S3::Bucket' },
        Machine: { Type: 'AWS::StepFunctions::StateMachine' },
        FnRole: { Type: 'AWS::IAM::Role' },
        Fn: {
          Type: 'AWS::Lambda::Function',
          Properties: {
            Description: 'Security pipeline: lambdas/write-list-summary.ts',
            Role: { 'Fn::GetAtt': ['FnRole', 'Arn'] },
            Environment: { Variables: { RESULTS_BUCKET: { Ref: 'Results' } } },
          },
        },
        FnPolicy: {
          Type: 'AWS::IAM::Policy',
          Properties: {
            Roles: [{ Ref: 'FnRole' }],
            PolicyDocument: {
              Statement: [
                {
                  Effect: 'Allow',
                  Action: 's3:GetObject',
                  // biome-ignore lint/suspicious/noTemplateCurlyInString: a CloudFormation Fn::Sub pattern
                  Resource: { 'Fn::Sub': '${Results.Arn}/lists/*' },
                },
                {
                  Effect: 'Allow',
                  Action: 'states:DescribeExecution',
                  Resource: {
                    'Fn::Join': [
                      '',
                      [
                        'arn:',
                        { Ref: 'AWS::Partition' },
                        ':states:',
                        { Ref: 'AWS::Region' },
                        ':',
                        { Ref: 'AWS::AccountId' },
                        ':execution:',
                        { 'Fn::Select': [6, { 'Fn::Split': [':', { Ref: 'Machine' }] }] },
                        ':*',
                      ],
                    ],
                  },
                },
              ],
            },
          },
        },
      },
    });
    const fn = view.functions['write-list-summary'];
    expect(view.buckets.results).toBe('securitypipeline-results');
    expect(fn?.roleArn).toBe(`arn:aws:iam::${LOCAL_STACK.account}:role/SecurityPipeline-FnRole`);
    expect(fn?.policies[0]?.policy.Statement.map((s) => s.Resource)).toEqual([
      'arn:aws:s3:::securitypipeline-results/lists/*',
      `arn:aws:states:${LOCAL_STACK.region}:${LOCAL_STACK.account}:execution:SecurityPipeline-Machine:*`,
    ]);
  });
});

/** One function allowed to write and list under scans/, a bucket policy denying deletes and old TLS. */
const VIEW: IamView = {
  environment: LOCAL_STACK,
  functions: {
    'write-scan-manifest': {
      functionName: 'ManifestFn',
      roleName: 'ManifestRole',
      roleArn: `arn:aws:iam::${LOCAL_STACK.account}:role/ManifestRole`,
      managedPolicyArns: [],
      policies: [
        {
          name: 'p',
          policy: {
            Statement: [
              {
                Effect: 'Allow',
                Action: ['s3:PutObject', 's3:DeleteObject'],
                Resource: 'arn:aws:s3:::deployed-results/scans/*',
              },
              {
                Effect: 'Allow',
                Action: 's3:ListBucket',
                Resource: 'arn:aws:s3:::deployed-results',
                Condition: { StringLike: { 's3:prefix': ['scans/*'] } },
              },
            ],
          },
        },
      ],
    },
  },
  resourcePolicies: {
    'arn:aws:s3:::deployed-results': {
      Statement: [
        {
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 's3:*',
          Resource: 'arn:aws:s3:::deployed-results/*',
          Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
        },
        {
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 's3:*',
          Resource: 'arn:aws:s3:::deployed-results/*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        },
        {
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 's3:DeleteObject',
          Resource: 'arn:aws:s3:::deployed-results/scans/locked/*',
        },
      ],
    },
  },
  buckets: { results: 'deployed-results' },
  rotatedSecrets: [],
};

describe('the evaluator (local/iam/evaluator.ts)', () => {
  const evaluator = () => createIamEvaluator(VIEW, { buckets: { 'pipeline-results': 'deployed-results' } });
  const check = (e: ReturnType<typeof evaluator>, command: string, input: Record<string, unknown>) =>
    runAs('write-scan-manifest', () => e.check('S3Client', command, input));

  it('allows what the role grants over HTTPS with TLS 1.3, despite the bucket policy transport denies', async () => {
    const e = evaluator();
    await check(e, 'PutObjectCommand', { Bucket: 'pipeline-results', Key: 'scans/a/manifest.json' });
    await check(e, 'ListObjectsV2Command', { Bucket: 'pipeline-results', Prefix: 'scans/a/' });
    expect(e.stats()).toMatchObject({ simulations: 2, denials: [] });
  });

  it('denies what no statement allows with the SDK-shaped AccessDenied and AWS wording', async () => {
    const e = evaluator();
    const denied = await check(e, 'ListObjectsV2Command', {
      Bucket: 'pipeline-results',
      Prefix: 'lists/',
    }).catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(AccessDeniedError);
    expect(denied).toMatchObject({
      name: 'AccessDenied',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
    });
    expect((denied as Error).message).toBe(
      `User: arn:aws:sts::${LOCAL_STACK.account}:assumed-role/ManifestRole/ManifestFn is not authorized to perform: ` +
        's3:ListBucket on resource: "arn:aws:s3:::deployed-results" because no identity-based policy allows the s3:ListBucket action',
    );
    expect(e.stats().denials).toEqual([
      expect.objectContaining({ handler: 'write-scan-manifest', action: 's3:ListBucket' }),
    ]);
  });

  it('applies an explicit deny of the resource policy over the role allow', async () => {
    const e = evaluator();
    await expect(
      check(e, 'DeleteObjectCommand', { Bucket: 'pipeline-results', Key: 'scans/locked/x' }),
    ).rejects.toThrow(
      /s3:DeleteObject on resource: "arn:aws:s3:::deployed-results\/scans\/locked\/x" with an explicit deny in a resource-based policy/,
    );
  });

  it('evaluates only calls made inside a handler; a handler the template lacks is an error', async () => {
    const e = evaluator();
    await e.check('S3Client', 'GetObjectCommand', { Bucket: 'pipeline-results', Key: 'lists/anything' });
    expect(e.stats().simulations).toBe(0);
    await expect(
      runAs('start-scan', () =>
        e.check('S3Client', 'GetObjectCommand', { Bucket: 'pipeline-results', Key: 'x' }),
      ),
    ).rejects.toThrow('the synthesized template has no function for lambdas/start-scan.ts');
  });
});

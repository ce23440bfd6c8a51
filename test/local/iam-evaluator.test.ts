/**
 * The IAM evaluator without a run: the template resolver, the evaluator's decisions and errors over
 * a small hand-written view, and the licence boundary (iam-simulate, AGPL-3.0, never reaches a
 * Lambda bundle).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { handlerEntryPath } from '../../lambdas/registry.ts';
import { runAs } from '../../local/services/iam/attribution.ts';
import { AccessDeniedError, createIamEvaluator } from '../../local/services/iam/evaluator.ts';
import { FAKE_ENVIRONMENT } from '../../local/services/iam/template-resolver.ts';
import { type IamView, iamViewOf } from '../../local/services/iam/view.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A template with `resources` and one function of `handler`, whose role has one policy of `statements`. */
function oneFunctionTemplate(
  handler: string,
  resources: Record<string, unknown>,
  statements: Record<string, unknown>[],
  variables: Record<string, unknown> = {},
) {
  return {
    Resources: {
      ...resources,
      FnRole: { Type: 'AWS::IAM::Role' },
      Fn: {
        Type: 'AWS::Lambda::Function',
        Properties: {
          Description: `Security pipeline: ${handlerEntryPath(handler)}`,
          Role: { 'Fn::GetAtt': ['FnRole', 'Arn'] },
          Environment: { Variables: variables },
        },
      },
      FnPolicy: {
        Type: 'AWS::IAM::Policy',
        Properties: { Roles: [{ Ref: 'FnRole' }], PolicyDocument: { Statement: statements } },
      },
    },
  };
}

describe('template resolution (local/services/iam/view.ts)', () => {
  it('resolves Ref, GetAtt, Join, Sub and Select/Split in role and resource policies to concrete ARNs', () => {
    const view = iamViewOf(
      oneFunctionTemplate(
        'write-list-summary',
        {
          Results: { Type: 'AWS::S3::Bucket' },
          Machine: { Type: 'AWS::StepFunctions::StateMachine' },
        },
        [
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
        { RESULTS_BUCKET: { Ref: 'Results' } },
      ),
    );
    const fn = view.functions['write-list-summary'];
    expect(view.buckets.results).toBe('securitypipeline-results');
    expect(fn?.roleArn).toBe(`arn:aws:iam::${FAKE_ENVIRONMENT.account}:role/SecurityPipeline-FnRole`);
    expect(fn?.policies[0]?.policy.Statement.map((s) => s.Resource)).toEqual([
      'arn:aws:s3:::securitypipeline-results/lists/*',
      `arn:aws:states:${FAKE_ENVIRONMENT.region}:${FAKE_ENVIRONMENT.account}:execution:SecurityPipeline-Machine:*`,
    ]);
  });
});

/** One function allowed to write and list under scans/, a bucket policy denying deletes and old TLS. */
const VIEW: IamView = {
  environment: FAKE_ENVIRONMENT,
  functions: {
    'write-scan-manifest': {
      functionName: 'ManifestFn',
      roleName: 'ManifestRole',
      roleArn: `arn:aws:iam::${FAKE_ENVIRONMENT.account}:role/ManifestRole`,
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

describe('the evaluator (local/services/iam/evaluator.ts)', () => {
  const evaluator = () => createIamEvaluator(VIEW, { buckets: { 'pipeline-results': 'deployed-results' } });
  const check = (e: ReturnType<typeof evaluator>, command: string, input: Record<string, unknown>) =>
    runAs('write-scan-manifest', () => e.check('S3Client', command, input));

  it('allows what the role grants over HTTPS with TLS 1.3, despite the bucket policy transport denies', async () => {
    const e = evaluator();
    await check(e, 'PutObjectCommand', { Bucket: 'pipeline-results', Key: 'scans/a/manifest.json' });
    await check(e, 'ListObjectsV2Command', { Bucket: 'pipeline-results', Prefix: 'scans/a/' });
    expect(e.stats()).toMatchObject({ checks: 2, simulations: 2, denials: [] });
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
      `User: arn:aws:sts::${FAKE_ENVIRONMENT.account}:assumed-role/ManifestRole/ManifestFn is not authorized to perform: ` +
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
    expect(e.stats().checks).toBe(0);
    await expect(
      runAs('start-scan', () =>
        e.check('S3Client', 'GetObjectCommand', { Bucket: 'pipeline-results', Key: 'x' }),
      ),
    ).rejects.toThrow('the synthesized template has no function for lambdas/scan/start-scan.ts');
  });
});

describe('secrets named by name (local/services/iam/requests.ts with the resolver)', () => {
  it("gives a secret named in a call the ARN the template's secret resolves to, so its grant applies", async () => {
    const view = iamViewOf(
      oneFunctionTemplate(
        'start-scan',
        { Key: { Type: 'AWS::SecretsManager::Secret', Properties: { Name: 'vendor/api-key' } } },
        [{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: 'Key' } }],
      ),
    );
    const e = createIamEvaluator(view);
    const get = (SecretId: string) =>
      runAs('start-scan', () => e.check('SecretsManagerClient', 'GetSecretValueCommand', { SecretId }));
    await get('vendor/api-key');
    await expect(get('vendor/other-key')).rejects.toThrow(AccessDeniedError);
    expect(e.stats().denials.map((d) => d.resource)).toEqual([
      expect.stringMatching(/:secret:vendor\/other-key-\w{6}$/),
    ]);
  });
});

describe('remembered allows (local/services/iam/decision-memo.ts)', () => {
  /** Every call's outcome: 'allowed' or the denial's message. */
  async function outcomes(remember: boolean, view: IamView = VIEW) {
    const e = createIamEvaluator(view, { buckets: { 'pipeline-results': 'deployed-results' } }, { remember });
    const calls: [string, Record<string, unknown>][] = [];
    for (let i = 0; i < 40; i++) {
      calls.push([
        'PutObjectCommand',
        { Bucket: 'pipeline-results', Key: `scans/d${i}.example.com/report.json` },
      ]);
      calls.push(['PutObjectCommand', { Bucket: 'pipeline-results', Key: `lists/d${i}/summary.json` }]);
      calls.push([
        'DeleteObjectCommand',
        { Bucket: 'pipeline-results', Key: `scans/${i % 2 ? 'locked' : 'open'}/x${i}` },
      ]);
      calls.push([
        'ListObjectsV2Command',
        { Bucket: 'pipeline-results', Prefix: i % 3 ? `scans/d${i}/` : 'lists/' },
      ]);
    }
    const seen: string[] = [];
    for (const [command, input] of calls) {
      seen.push(
        await runAs('write-scan-manifest', () => e.check('S3Client', command, input)).then(
          () => 'allowed',
          (error: Error) => error.message,
        ),
      );
    }
    return { seen, stats: e.stats() };
  }

  it('answers repeats from an earlier allow, and every decision is the one the simulator gives', async () => {
    const simulated = await outcomes(false);
    const remembered = await outcomes(true);

    expect(remembered.seen).toEqual(simulated.seen);
    expect(simulated.seen.filter((o) => o === 'allowed').length).toBeGreaterThan(40);
    expect(simulated.stats.simulations).toBe(160);
    // Denials (lists/, locked/, listing lists/) are simulated every time; of the allows, one write and
    // one delete under scans/ stand for all, while each listed prefix is its own s3:prefix (26).
    expect(remembered.stats.denials).toHaveLength(74);
    expect(remembered.stats.simulations).toBe(74 + 2 + 26);
  });

  it('remembers nothing for a policy with a clock condition', async () => {
    const timed: IamView = {
      ...VIEW,
      functions: Object.fromEntries(
        Object.entries(VIEW.functions).map(([file, fn]) => [
          file,
          {
            ...fn,
            policies: fn.policies.map((p) => ({
              ...p,
              policy: {
                Statement: p.policy.Statement.map((s) => ({
                  ...s,
                  Condition: { DateLessThan: { 'aws:CurrentTime': '2999-01-01T00:00:00Z' } },
                })),
              },
            })),
          },
        ]),
      ),
    };
    const { stats } = await outcomes(true, timed);
    expect(stats.simulations).toBe(stats.checks);
  });
});

describe('the licence boundary', () => {
  it('keeps iam-simulate a devDependency that nothing deployed (lambdas/, lib/, bin/) imports', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    expect(
      Object.keys(manifest.dependencies ?? {}).filter((name) => name.startsWith('@cloud-copilot/')),
    ).toEqual([]);
    expect(manifest.devDependencies).toHaveProperty('@cloud-copilot/iam-simulate');
    const importers: string[] = [];
    for (const dir of ['lambdas', 'lib', 'bin']) {
      for (const file of await readdir(join(ROOT, dir), { recursive: true })) {
        if (!file.endsWith('.ts')) continue;
        const source = await readFile(join(ROOT, dir, file), 'utf8');
        if (/@cloud-copilot\/|local\/iam\//.test(source)) importers.push(`${dir}/${file}`);
      }
    }
    expect(importers).toEqual([]);
  });
});

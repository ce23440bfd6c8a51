/**
 * SecurityPipeline's props: the configuration's settings, checked by its one parser with each problem
 * naming the prop, and the rules each brought resource must meet, checked before anything is created.
 * The whole construct in a fresh app, from the packed tarball: test/package/installable.test.ts.
 */
import { type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Alias } from 'aws-cdk-lib/aws-kms';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption, type BucketProps } from 'aws-cdk-lib/aws-s3';
import { HostedRotation, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { PipelineConfigError } from '../../lib/config/errors.ts';
import { parsePipelineConfig } from '../../lib/config/parse.ts';
import type { PipelineConfigInput } from '../../lib/config/schema.ts';
import { VendorKeyStorage } from '../../lib/construct/props.ts';
import { SecurityPipeline, type SecurityPipelineProps } from '../../lib/security-pipeline.ts';
import { testApp } from '../kit/synth.ts';

const SECURE_BUCKET: BucketProps = {
  versioned: true,
  enforceSSL: true,
  blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
  encryption: BucketEncryption.S3_MANAGED,
};

/** The error SecurityPipeline throws for `props` (built by `make` in a fresh stack), or undefined. */
function problemsOf(make: (stack: Stack) => SecurityPipelineProps): PipelineConfigError | undefined {
  const stack = new Stack(testApp(), 'Team');
  try {
    new SecurityPipeline(stack, 'Pipeline', make(stack));
  } catch (error) {
    if (error instanceof PipelineConfigError) return error;
    throw error;
  }
  return undefined;
}

describe('SecurityPipeline settings', () => {
  it('names the prop of a bad setting, as props.<path>', () => {
    const error = problemsOf(() => ({ poll: { maxWait: Duration.hours(2) } }));
    expect(error?.message).toContain('SecurityPipeline Team/Pipeline props');
    expect(error?.issues.map((issue) => issue.setting)).toContain('props.poll.maxWait (in seconds)');
  });

  it('names the prop of a runtime Lambda does not offer', () => {
    const error = problemsOf(() => ({ lambdaRuntime: Runtime.NODEJS_20_X }));
    expect(error?.issues.map((issue) => issue.setting)).toEqual(['props.lambdaRuntime']);
  });

  it('refuses an id its metrics could not be queried by, naming the construct and what to change', () => {
    const stack = new Stack(testApp(), 'Team');
    expect(() => new SecurityPipeline(stack, "Partners' pipeline")).toThrow(
      `Team/Partners' pipeline: the pipeline's metrics are named "Team/Partners' pipeline", which may only hold letters, digits and '_', '-', '.', '/': rename the stack or the construct ids on its path`,
    );
  });

  it.each<[string, PipelineConfigInput | undefined]>([
    ['the defaults', undefined],
    ['per-api keys, no rotation', { vendor: { keys: 'per-api' }, rotation: { enabled: false } }],
    [
      'schedules and lists',
      {
        domainLists: { weekly: { domains: ['example.com'] } },
        schedules: [{ name: 'nightly', expression: 'cron(0 2 * * ? *)', domainList: 'weekly' }],
        notifications: { email: 'ops@example.com' },
      },
    ],
  ])('gives a validated configuration (%s) back unchanged: the app passes its own', (_, raw) => {
    const once = parsePipelineConfig(raw, 'test');
    expect(parsePipelineConfig(once, 'again')).toEqual(once);
  });
});

describe('brought resources', () => {
  it('refuses an unversioned, public, non-SSL input bucket, naming the prop', () => {
    const error = problemsOf((stack) => ({
      inputBucket: new Bucket(stack, 'Loose', {
        encryption: BucketEncryption.KMS,
        blockPublicAccess: BlockPublicAccess.BLOCK_ACLS_ONLY,
      }),
    }));
    const problems = error?.issues.filter((issue) => issue.setting === 'props.inputBucket') ?? [];
    expect(problems.map((issue) => issue.problem)).toEqual([
      expect.stringContaining('must be versioned'),
      expect.stringContaining('must block all public access'),
      expect.stringContaining('must be SSL-only'),
    ]);
  });

  it('refuses one bucket for both uploads and results', () => {
    const error = problemsOf((stack) => {
      const bucket = new Bucket(stack, 'Shared', SECURE_BUCKET);
      return { inputBucket: bucket, resultsBucket: bucket };
    });
    expect(error?.issues).toContainEqual({
      setting: 'props.resultsBucket',
      problem: expect.stringContaining('must not be props.inputBucket'),
    });
  });

  it('refuses an alarm topic under the AWS managed SNS key, which CloudWatch cannot use', () => {
    const managed = problemsOf((stack) => ({
      alarmTopic: new Topic(stack, 'Alarms', {
        masterKey: Alias.fromAliasName(stack, 'SnsManaged', 'alias/aws/sns'),
      }),
    }));
    expect(managed?.issues).toContainEqual({
      setting: 'props.alarmTopic',
      problem: expect.stringContaining('alias/aws/sns'),
    });
  });

  it('refuses a key secret that would generate the key, or hold it in the template', () => {
    const generated = problemsOf((stack) => ({
      vendorKeySecret: new Secret(stack, 'Key', {
        generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'apiKey' },
      }),
    }));
    expect(generated?.issues).toContainEqual({
      setting: 'props.vendorKeySecret',
      problem: expect.stringContaining('must not generate the key'),
    });
    const bare = problemsOf((stack) => ({ vendorKeySecret: new Secret(stack, 'Key') }));
    expect(bare?.issues).toContainEqual({
      setting: 'props.vendorKeySecret',
      problem: expect.stringContaining('must not generate the key'),
    });
  });

  it('refuses the org key secret in per-api mode, or one with its own rotation while the pipeline rotates', () => {
    const placeholder = { secretStringTemplate: '{"placeholder":"x"}', generateStringKey: 'nonce' };
    const perApi = problemsOf((stack) => ({
      vendor: { keys: VendorKeyStorage.PER_API },
      vendorKeySecret: new Secret(stack, 'Key', { generateSecretString: placeholder }),
    }));
    expect(perApi?.issues).toContainEqual({
      setting: 'props.vendorKeySecret',
      problem: expect.stringContaining("'single' only: in per-api mode bring each API's secret"),
    });
    const rotated = problemsOf((stack) => {
      const secret = new Secret(stack, 'Key', { generateSecretString: placeholder });
      secret.addRotationSchedule('Own', { hostedRotation: HostedRotation.mysqlSingleUser() });
      return { vendorKeySecret: secret };
    });
    expect(rotated?.issues).toContainEqual({
      setting: 'props.vendorKeySecret',
      problem: expect.stringContaining('no rotation schedule of its own'),
    });
  });

  describe('per-API key secrets (vendor.keys per-api)', () => {
    const placeholder = { secretStringTemplate: '{"placeholder":"x"}', generateStringKey: 'nonce' };

    it('uses the brought secret for its API and creates the others', () => {
      const stack = new Stack(testApp(), 'Team');
      const scanKey = new Secret(stack, 'TeamScanKey', { generateSecretString: placeholder });
      const pipeline = new SecurityPipeline(stack, 'Pipeline', {
        vendor: { keys: VendorKeyStorage.PER_API },
        vendorKeySecrets: { scan: scanKey },
      });
      expect(pipeline.vendorSecrets.secretFor('scan')).toBe(scanKey);
      expect(pipeline.vendorSecrets.secrets).not.toContain(scanKey);
      expect(pipeline.vendorSecrets.secrets).toHaveLength(2);

      const template = Template.fromStack(stack);
      const secretIds = Object.keys(template.findResources('AWS::SecretsManager::Secret'));
      expect(secretIds.filter((id) => /ScanApiKey/.test(id))).toEqual([]);
      expect(secretIds.filter((id) => /(Keys|Breach)ApiKey/.test(id))).toHaveLength(2);
      // The scan functions read it through their API's variable, and may read nothing else of it.
      const scanKeyId = stack.getLogicalId(scanKey.node.defaultChild as CfnElement);
      const readers = Object.values(template.findResources('AWS::Lambda::Function')).filter(
        (fn) =>
          JSON.stringify(fn.Properties?.Environment?.Variables?.SCAN_API_KEY_SECRET_ARN) ===
          JSON.stringify({ Ref: scanKeyId }),
      );
      expect(readers.length).toBeGreaterThan(0);
    });

    it('rotates a brought keys-API secret, which then may have no rotation of its own', () => {
      const stack = new Stack(testApp(), 'Team');
      const keysKey = new Secret(stack, 'TeamKeysKey', { generateSecretString: placeholder });
      new SecurityPipeline(stack, 'Pipeline', {
        vendor: { keys: VendorKeyStorage.PER_API },
        vendorKeySecrets: { keys: keysKey },
      });
      Template.fromStack(stack).hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
        SecretId: { Ref: stack.getLogicalId(keysKey.node.defaultChild as CfnElement) },
      });

      const rotated = problemsOf((other) => {
        const secret = new Secret(other, 'Key', { generateSecretString: placeholder });
        secret.addRotationSchedule('Own', { hostedRotation: HostedRotation.mysqlSingleUser() });
        return { vendor: { keys: VendorKeyStorage.PER_API }, vendorKeySecrets: { keys: secret } };
      });
      expect(rotated?.issues).toContainEqual({
        setting: 'props.vendorKeySecrets.keys',
        problem: expect.stringContaining('no rotation schedule of its own'),
      });
    });

    it("holds each to the org key secret's rules, naming its API, and refuses them in single mode", () => {
      const generated = problemsOf((stack) => ({
        vendor: { keys: VendorKeyStorage.PER_API },
        vendorKeySecrets: { breach: new Secret(stack, 'Key') },
      }));
      expect(generated?.issues).toContainEqual({
        setting: 'props.vendorKeySecrets.breach',
        problem: expect.stringContaining('must not generate the key'),
      });
      const single = problemsOf((stack) => ({
        vendorKeySecrets: { scan: new Secret(stack, 'Key', { generateSecretString: placeholder }) },
      }));
      expect(single?.issues).toContainEqual({
        setting: 'props.vendorKeySecrets',
        problem: expect.stringContaining("'per-api' only"),
      });
      const unknown = problemsOf((stack) => ({
        vendor: { keys: VendorKeyStorage.PER_API },
        vendorKeySecrets: { scans: new Secret(stack, 'Key', { generateSecretString: placeholder }) } as never,
      }));
      expect(unknown?.issues).toContainEqual({
        setting: 'props.vendorKeySecrets.scans',
        problem: 'names no vendor API (expected one of scan, keys, breach)',
      });
    });
  });
});

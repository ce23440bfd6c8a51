import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  functionFor,
  grantsOf,
  logicalIdOfType,
  resourcesAllowed,
  type Synthesized,
  synth,
} from '../kit/synth.ts';

let synthesized: Synthesized;

beforeAll(() => {
  synthesized = synth();
});

const BUCKETS = ['StorageInput', 'StorageResults', 'StorageAccessLogs'];

describe('PipelineStorage', () => {
  it('creates the input, results and access-log buckets', () => {
    synthesized.template.resourceCountIs('AWS::S3::Bucket', 3);
    for (const prefix of BUCKETS)
      expect(logicalIdOfType(synthesized, 'AWS::S3::Bucket', prefix)).toBeTruthy();
  });

  it.each(BUCKETS)(
    '%s blocks public access, encrypts with SSE-S3, versions and enforces ownership',
    (prefix) => {
      const bucket = synthesized.json.Resources[logicalIdOfType(synthesized, 'AWS::S3::Bucket', prefix)];
      expect(bucket?.Properties).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        VersioningConfiguration: { Status: 'Enabled' },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      });
    },
  );

  it.each(BUCKETS)('%s aborts orphaned multipart uploads after a day and expires old versions', (prefix) => {
    const bucket = synthesized.json.Resources[logicalIdOfType(synthesized, 'AWS::S3::Bucket', prefix)];
    const lifecycle = bucket?.Properties?.LifecycleConfiguration as
      | { Rules: Record<string, unknown>[] }
      | undefined;
    const rules = lifecycle?.Rules;
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          Status: 'Enabled',
        }),
        expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 90 }, Status: 'Enabled' }),
      ]),
    );
  });

  it.each(['StorageInput', 'StorageResults'])(
    '%s expires what a crash left under staging/ after a week, and no result: only that prefix expires',
    (prefix) => {
      const bucket = synthesized.json.Resources[logicalIdOfType(synthesized, 'AWS::S3::Bucket', prefix)];
      const lifecycle = bucket?.Properties?.LifecycleConfiguration as
        | { Rules: Record<string, unknown>[] }
        | undefined;
      const expiring = (lifecycle?.Rules ?? []).filter((rule) => rule.ExpirationInDays !== undefined);
      expect(expiring).toEqual([
        expect.objectContaining({
          Prefix: 'staging/',
          ExpirationInDays: 7,
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
          Status: 'Enabled',
        }),
      ]);
    },
  );

  it.each(BUCKETS)('%s refuses plain HTTP and TLS below 1.2', (prefix) => {
    const bucketId = logicalIdOfType(synthesized, 'AWS::S3::Bucket', prefix);
    synthesized.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Deny', Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
        ]),
      },
    });
  });

  it('retains the data buckets when the stack is deleted (by default)', () => {
    for (const prefix of BUCKETS) {
      const id = logicalIdOfType(synthesized, 'AWS::S3::Bucket', prefix);
      synthesized.template.hasResource('AWS::S3::Bucket', {
        Properties: Match.anyValue(),
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
      expect((synthesized.json.Resources[id] as { DeletionPolicy?: string }).DeletionPolicy).toBe('Retain');
    }
  });

  it('empties and deletes the buckets in destroy mode', () => {
    const throwaway = synth({ removalPolicy: 'destroy' });
    for (const prefix of BUCKETS) {
      const id = logicalIdOfType(throwaway, 'AWS::S3::Bucket', prefix);
      expect((throwaway.json.Resources[id] as { DeletionPolicy?: string }).DeletionPolicy).toBe('Delete');
    }
    expect(
      Object.values(throwaway.json.Resources).some((r) => r.Type === 'Custom::S3AutoDeleteObjects'),
    ).toBe(true);
  });

  it('turns on EventBridge delivery without a custom resource or any non-Node.js runtime', () => {
    synthesized.template.resourceCountIs('Custom::S3BucketNotifications', 0);
    const runtimes = Object.values(synthesized.json.Resources)
      .map((r) => (r.Properties as { Runtime?: unknown } | undefined)?.Runtime)
      .filter((r) => r !== undefined);
    expect(runtimes.length).toBeGreaterThan(0);
    expect(runtimes.filter((r) => typeof r !== 'string' || !r.startsWith('nodejs'))).toEqual([]);
  });

  it('sends EventBridge notifications for the input bucket and access logs of input and results', () => {
    const logsId = logicalIdOfType(synthesized, 'AWS::S3::Bucket', 'StorageAccessLogs');
    synthesized.template.hasResourceProperties('AWS::S3::Bucket', {
      NotificationConfiguration: { EventBridgeConfiguration: { EventBridgeEnabled: true } },
    });
    for (const [prefix, logPrefix] of [
      ['StorageInput', 'input/'],
      ['StorageResults', 'results/'],
    ]) {
      const bucket =
        synthesized.json.Resources[logicalIdOfType(synthesized, 'AWS::S3::Bucket', prefix as string)];
      expect(bucket?.Properties?.LoggingConfiguration).toEqual({
        DestinationBucketName: { Ref: logsId },
        LogFilePrefix: logPrefix,
      });
    }
  });
});

describe('VendorSecrets', () => {
  it('creates one org key secret by default, with a placeholder and no key in the template', () => {
    // The org key, and the breach workflow's identity and report naming (HMAC) keys, which are no
    // vendor credentials.
    synthesized.template.resourceCountIs('AWS::SecretsManager::Secret', 3);
    synthesized.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Description: Match.stringLikeRegexp('aws secretsmanager put-secret-value'),
      GenerateSecretString: Match.objectLike({ GenerateStringKey: 'nonce' }),
    });
    for (const secret of Object.values(synthesized.json.Resources).filter(
      (r) => r.Type === 'AWS::SecretsManager::Secret',
    )) {
      expect(secret.Properties).not.toHaveProperty('SecretString');
    }
  });

  it('binds the org key to every vendor-calling scan step through VENDOR_API_KEY_SECRET_ARN', () => {
    const secretId = logicalIdOfType(synthesized, 'AWS::SecretsManager::Secret', 'VendorSecretsOrgApiKey');
    for (const handler of ['start-scan', 'poll-scan-status', 'fetch-scan-output']) {
      const fn = functionFor(synthesized, handler);
      expect(fn.environment.VENDOR_API_KEY_SECRET_ARN).toEqual({ Ref: secretId });
      expect(
        resourcesAllowed(grantsOf(synthesized, fn.roleLogicalId), 'secretsmanager:GetSecretValue'),
      ).toEqual([`<Ref:${secretId}>`]);
    }
  });

  it('creates three secrets in per-api mode and binds only the scan secret to the scan steps', () => {
    // Act
    const perApi = synth({ vendor: { keys: 'per-api' } });

    // Assess
    perApi.template.resourceCountIs('AWS::SecretsManager::Secret', 5);
    const scanSecret = logicalIdOfType(perApi, 'AWS::SecretsManager::Secret', 'VendorSecretsScanApiKey');
    const fn = functionFor(perApi, 'poll-scan-status');
    expect(fn.environment).toMatchObject({
      SCAN_API_KEY_SECRET_ARN: { Ref: scanSecret },
      VENDOR_API_KEY_SECRET_ARN: { Ref: scanSecret },
    });
    expect(fn.environment).not.toHaveProperty('KEYS_API_KEY_SECRET_ARN');
    expect(fn.environment).not.toHaveProperty('BREACH_API_KEY_SECRET_ARN');
    expect(resourcesAllowed(grantsOf(perApi, fn.roleLogicalId), 'secretsmanager:GetSecretValue')).toEqual([
      `<Ref:${scanSecret}>`,
    ]);
    perApi.template.hasOutput('ScanApiKeySecretArn', { Value: { Ref: scanSecret } });
    perApi.template.hasOutput('KeysApiKeySecretArn', Match.anyValue());
    perApi.template.hasOutput('BreachApiKeySecretArn', Match.anyValue());
  });
});

describe('SecurityPipelineStack', () => {
  it('outputs the bucket names, state machine ARNs and the secret ARN (names generated by CloudFormation)', () => {
    for (const output of [
      'InputBucketName',
      'ResultsBucketName',
      'ScanStateMachineArn',
      'DomainListStateMachineArn',
      'VendorApiKeySecretArn',
    ]) {
      synthesized.template.hasOutput(output, Match.anyValue());
    }
    // A literal name would be hard-coded; references to generated names are fine.
    for (const [id, resource] of Object.entries(synthesized.json.Resources)) {
      for (const name of [
        'BucketName',
        'StateMachineName',
        'FunctionName',
        'Name',
        'QueueName',
        'RoleName',
      ]) {
        expect(typeof resource.Properties?.[name], `${id}.${name}`).not.toBe('string');
      }
    }
  });

  it('warns at synth time while the vendor URL is the placeholder, and not once it is set', () => {
    Annotations.fromStack(synthesized.stack).hasWarning(
      '*',
      Match.stringLikeRegexp('scanApiUrl is the placeholder'),
    );
    // The construct reads its props, not CDK context: the warning names the setting, never where
    // the deployable app happens to read it from.
    const [placeholder] = Annotations.fromStack(synthesized.stack).findWarning(
      '*',
      Match.stringLikeRegexp('scanApiUrl is the placeholder'),
    );
    expect(String(placeholder?.entry.data)).not.toMatch(/cdk\.json|context|pipelineConfigFile/);
    const configured = synth({ vendor: { scanApiUrl: 'https://scan.vendor.test' } });
    Annotations.fromStack(configured.stack).hasNoWarning('*', Match.stringLikeRegexp('placeholder'));
  });
});

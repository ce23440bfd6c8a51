import 'aws-sdk-client-mock-vitest/extend';
import {
  GetSecretValueCommand,
  type GetSecretValueCommandInput,
  type GetSecretValueCommandOutput,
  ResourceNotFoundException,
  SecretsManagerClient,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '#lambdas/platform/errors';
import {
  apiKeyFromSecretValue,
  createSecretsManagerReader,
  createStaticSecretReader,
  credentialProviderFromSecret,
  parseVendorCredentials,
  SecretAccessError,
} from '#lambdas/platform/secrets';
import { VENDOR_APIS } from '#lambdas/registry';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { startVendorSimulator } from '#local/simulator/index';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:vendor/api-key-AbCdEf';

/**
 * A small Secrets Manager: versions with stages. `rotate` adds a version that becomes AWSCURRENT
 * and moves AWSPREVIOUS, like a finished rotation.
 */
class FakeSecretsManager {
  private readonly versions = new Map<string, { id: string; value: string; stages: Set<string> }[]>();
  private counter = 0;
  reads = 0;

  create(secretId: string, value: string): void {
    this.versions.set(secretId, [{ id: this.nextId(), value, stages: new Set(['AWSCURRENT']) }]);
  }

  rotate(secretId: string, value: string): void {
    const versions = this.versions.get(secretId) ?? [];
    for (const version of versions) {
      version.stages.delete('AWSPREVIOUS');
      if (version.stages.delete('AWSCURRENT')) version.stages.add('AWSPREVIOUS');
    }
    versions.push({ id: this.nextId(), value, stages: new Set(['AWSCURRENT']) });
    this.versions.set(secretId, versions);
  }

  getSecretValue(input: GetSecretValueCommandInput): GetSecretValueCommandOutput {
    this.reads += 1;
    const stage = input.VersionStage ?? (input.VersionId ? undefined : 'AWSCURRENT');
    const version = this.versions
      .get(input.SecretId ?? '')
      ?.find((v) => (stage ? v.stages.has(stage) : v.id === input.VersionId));
    if (!version) {
      throw new ResourceNotFoundException({
        message: "Secrets Manager can't find the specified secret.",
        $metadata: { httpStatusCode: 400 },
      });
    }
    return {
      ARN: input.SecretId,
      Name: 'vendor/api-key',
      VersionId: version.id,
      VersionStages: [...version.stages],
      SecretString: version.value,
      $metadata: { httpStatusCode: 200 },
    };
  }

  private nextId(): string {
    this.counter += 1;
    return `00000000-0000-4000-8000-${String(this.counter).padStart(12, '0')}`;
  }
}

const secretsManager = mockClient(SecretsManagerClient);
let fake: FakeSecretsManager;

beforeEach(() => {
  secretsManager.reset();
  fake = new FakeSecretsManager();
  secretsManager
    .on(GetSecretValueCommand)
    .callsFake((input: GetSecretValueCommandInput) => fake.getSecretValue(input));
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(() => {
  secretsManager.restore();
});

function reader(maxAgeSeconds?: number) {
  return createSecretsManagerReader({
    client: new SecretsManagerClient({ region: 'eu-west-1' }),
    ...(maxAgeSeconds === undefined ? {} : { maxAgeSeconds }),
  });
}

describe('createSecretsManagerReader', () => {
  it('reads AWSCURRENT once and serves repeated reads from the cache within maxAge', async () => {
    // Prepare
    fake.create(SECRET_ARN, 'sk_live_first');
    const secrets = reader(60);

    // Act
    const values = [await secrets.getSecretString(SECRET_ARN), await secrets.getSecretString(SECRET_ARN)];

    // Assess
    expect(values).toEqual(['sk_live_first', 'sk_live_first']);
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
    expect(secretsManager).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: SECRET_ARN });
  });

  it('reads the rotated value once maxAge has passed', async () => {
    // Prepare
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-20T10:00:00Z'));
    fake.create(SECRET_ARN, 'sk_live_first');
    const secrets = reader(60);
    await secrets.getSecretString(SECRET_ARN);
    fake.rotate(SECRET_ARN, 'sk_live_second');

    // Act
    vi.setSystemTime(new Date('2026-11-20T10:00:30Z'));
    const withinMaxAge = await secrets.getSecretString(SECRET_ARN);
    vi.setSystemTime(new Date('2026-11-20T10:01:01Z'));
    const afterMaxAge = await secrets.getSecretString(SECRET_ARN);

    // Assess
    expect(withinMaxAge).toBe('sk_live_first');
    expect(afterMaxAge).toBe('sk_live_second');
    expect(fake.reads).toBe(2);
  });

  it('re-reads at once on forceRefresh, e.g. after a 401 caused by a rotation', async () => {
    // Prepare
    fake.create(SECRET_ARN, 'sk_live_first');
    const secrets = reader(3600);
    await secrets.getSecretString(SECRET_ARN);
    fake.rotate(SECRET_ARN, 'sk_live_second');

    // Act
    const cached = await secrets.getSecretString(SECRET_ARN);
    const refreshed = await secrets.getSecretString(SECRET_ARN, { forceRefresh: true });
    const afterRefresh = await secrets.getSecretString(SECRET_ARN);

    // Assess
    expect([cached, refreshed, afterRefresh]).toEqual(['sk_live_first', 'sk_live_second', 'sk_live_second']);
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
  });

  it('turns a missing secret into a ConfigurationError naming the secret id', async () => {
    // Act
    const attempt = reader().getSecretString(SECRET_ARN);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(ConfigurationError);
    await expect(attempt).rejects.toMatchObject({ setting: SECRET_ARN });
    await expect(attempt).rejects.toThrow(/ResourceNotFoundException/);
  });

  it('turns throttling into a retryable SecretAccessError', async () => {
    // Prepare
    secretsManager.on(GetSecretValueCommand).rejects(
      new SecretsManagerServiceException({
        name: 'ThrottlingException',
        $fault: 'client',
        message: 'Rate exceeded',
        $metadata: { httpStatusCode: 400 },
      }),
    );

    // Act
    const error = await reader()
      .getSecretString(SECRET_ARN)
      .catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(SecretAccessError);
    expect(error).toMatchObject({ name: 'SecretAccessError', secretId: SECRET_ARN, retryable: true });
  });
});

describe('credentialProviderFromSecret', () => {
  it.each([
    ['a bare key', 'sk_live_abc123', 'sk_live_abc123'],
    ['a bare key with a trailing newline', 'sk_live_abc123\n', 'sk_live_abc123'],
    ['JSON with apiKey', '{"apiKey":"sk_live_json"}', 'sk_live_json'],
    ['JSON with api_key', '{"api_key":"sk_live_snake"}', 'sk_live_snake'],
    ['JSON with key', '{"key":"sk_live_plain", "note":"rotated by Lambda"}', 'sk_live_plain'],
    ['JSON with several, apiKey first', '{"key":"older","apiKey":"sk_live_pref"}', 'sk_live_pref'],
  ])('accepts %s', async (_label, value, expected) => {
    // Prepare
    fake.create(SECRET_ARN, value);
    const credentials = credentialProviderFromSecret(reader(), SECRET_ARN, { apis: VENDOR_APIS });

    // Act
    const key = await credentials();

    // Assess
    expect(key).toBe(expected);
  });

  it.each([
    ['empty', '   ', 'the secret is empty'],
    [
      'JSON without a key field',
      '{"token":"sk_live_hidden_1"}',
      'has no non-empty "apiKey", "api_key" or "key" field',
    ],
    ['JSON with an empty key', '{"apiKey":"  "}', 'has no non-empty'],
    ['broken JSON', '{"apiKey": "sk_live_hidden_2"', 'looks like JSON but does not parse'],
    ['a key with inner whitespace', 'sk_live hidden_3', 'whitespace or non-printable'],
  ])(
    'refuses %s with a ConfigurationError that names the secret, not its value',
    async (_label, value, reason) => {
      // Act
      const error = await Promise.resolve()
        .then(() => apiKeyFromSecretValue(value, SECRET_ARN, { apis: VENDOR_APIS }))
        .catch((e: unknown) => e);

      // Assess
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as ConfigurationError).setting).toBe(SECRET_ARN);
      expect((error as Error).message).toContain(reason);
      expect((error as Error).message).not.toMatch(/hidden/);
    },
  );

  it('passes forceRefresh through, so a vendor 401 after a rotation recovers with the new key', async () => {
    // Prepare: the secret holds the simulator's key; then the key is rotated at the vendor and in the secret
    const sim = await startVendorSimulator({ pollsToFinish: 0 });
    fake.create(SECRET_ARN, JSON.stringify({ apiKey: sim.apiKey }));
    const client = new ScanClient({
      baseUrl: sim.url,
      credentials: credentialProviderFromSecret(reader(3600), SECRET_ARN, { apis: VENDOR_APIS }),
      retry: { maxAttempts: 1 },
    });
    await client.startScan('before.example.com');
    fake.rotate(SECRET_ARN, JSON.stringify({ apiKey: sim.replaceKey() }));

    // Act
    const started = await client.startScan('after.example.com');

    // Assess
    expect(started.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(fake.reads).toBe(2);
    await client.close();
    await sim.close();
  });
});

describe("a secret's own keys per API (apiKeys)", () => {
  const value = JSON.stringify({ apiKey: 'sk_live_org', apiKeys: { breach: 'sk_live_breach' } });

  it('gives an API its own key when the secret has one, and every other API the org key', () => {
    // Act
    const keys = VENDOR_APIS.map((api) =>
      apiKeyFromSecretValue(value, SECRET_ARN, { api, apis: VENDOR_APIS }),
    );

    // Assess
    expect(keys).toEqual(VENDOR_APIS.map((api) => (api === 'breach' ? 'sk_live_breach' : 'sk_live_org')));
    expect(parseVendorCredentials(value, SECRET_ARN, VENDOR_APIS).apiKeys).toEqual({
      breach: 'sk_live_breach',
    });
  });

  it('refuses an API the caller does not list, naming the secret and the APIs it knows', () => {
    // Prepare: the platform knows no API by itself; a caller that lists other ones is held to them.
    const apis = ['alpha', 'beta'] as unknown as typeof VENDOR_APIS;

    // Act
    const error = thrownBy(() => parseVendorCredentials(value, SECRET_ARN, apis));
    const typo = thrownBy(() =>
      parseVendorCredentials('{"apiKey":"k1","apiKeys":{"scna":"k2"}}', SECRET_ARN, VENDOR_APIS),
    );

    // Assess
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).setting).toBe(SECRET_ARN);
    expect(error.message).toContain('"apiKeys" names an unknown API (expected alpha, beta)');
    expect(typo.message).toContain(`(expected ${VENDOR_APIS.join(', ')})`);
    expect(`${error.message} ${typo.message}`).not.toMatch(/sk_live|k2/);
  });

  it('refuses apiKeys that is not an object, showing the shape with a listed API', () => {
    const error = thrownBy(() =>
      parseVendorCredentials('{"apiKey":"k1","apiKeys":"k2"}', SECRET_ARN, VENDOR_APIS),
    );
    expect(error.message).toContain(`"apiKeys" must be an object such as {"${VENDOR_APIS[0]}": "<key>"}`);
  });
});

function thrownBy(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

describe('createStaticSecretReader', () => {
  it('serves the configured values and replaced ones, and names an unknown secret', async () => {
    // Prepare
    const secrets = createStaticSecretReader({ local: 'sk_sim_local' });

    // Act
    const first = await secrets.getSecretString('local');
    secrets.setSecretString('local', 'sk_sim_rotated');
    const second = await secrets.getSecretString('local', { forceRefresh: true });
    const missing = secrets.getSecretString('other');

    // Assess
    expect([first, second]).toEqual(['sk_sim_local', 'sk_sim_rotated']);
    await expect(missing).rejects.toMatchObject({ name: 'ConfigurationError', setting: 'other' });
  });
});

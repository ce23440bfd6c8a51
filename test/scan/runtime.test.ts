import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '#lambdas/platform/errors';
import { readUrlEnv, requireEnv } from '#lambdas/platform/runtime/env';
import { createLazyHandler, createObservability } from '#lambdas/platform/runtime/observability';
import { createStaticSecretReader } from '#lambdas/platform/secrets';
import type { ScanDeps } from '#lambdas/scan/deps';
import { storageScanDepsFromEnvironment } from '#lambdas/scan/deps';
import { createScanSettings, scanSettingsFromEnv } from '#lambdas/scan/settings';
import { scanDepsFromEnvironment } from '#lambdas/scan/vendor-deps';
import type { VendorSimulator } from '#local/simulator/types';
import { createStartScanHandler, handler as startScanLambda } from '../../lambdas/scan/start-scan.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { thrownBy } from '../kit/errors.ts';
import { startSimulator } from '../kit/simulator.ts';
import { RESULTS_BUCKET } from './fixture.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:vendor-key';

describe('environment readers', () => {
  it('names a missing required variable', () => {
    const error = thrownBy(ConfigurationError, () => requireEnv({ RESULTS_BUCKET: '  ' }, 'RESULTS_BUCKET'));
    expect(error.setting).toBe('RESULTS_BUCKET');
    expect(error.message).toBe('Configuration RESULTS_BUCKET: is required but not set');
  });

  it('refuses a URL that carries credentials, naming the variable', () => {
    const error = thrownBy(ConfigurationError, () =>
      readUrlEnv({ SCAN_API_URL: 'https://user:pw@vendor.example.com' }, 'SCAN_API_URL'),
    );
    expect(error.setting).toBe('SCAN_API_URL');
    expect(error.message).not.toContain('pw');
  });
});

describe('scanSettingsFromEnv', () => {
  it('uses the deployed defaults (60, 300, 1.25, 86400) when only the bucket is set', () => {
    expect(scanSettingsFromEnv({ RESULTS_BUCKET: 'results-bucket' })).toEqual({
      resultsBucket: 'results-bucket',
      poll: { minWaitSeconds: 60, maxWaitSeconds: 300, growthFactor: 1.25, deadlineSeconds: 86_400 },
      statusVocabulary: undefined,
      upload: { partSizeBytes: 8 * 1024 * 1024, queueSize: 2 },
      allowSpecialUse: [],
      listFields: {},
      maxOutputBytes: 1024 ** 3,
      maxDecodingRatio: 100,
      // SCAN_OUTPUTS unset: the table the handler was built with.
    });
  });

  it("reads where the vendor's listing keeps its fields (SCAN_LIST_FIELDS), and names a bad path", () => {
    const settings = scanSettingsFromEnv({
      RESULTS_BUCKET: 'results-bucket',
      SCAN_LIST_FIELDS: '{"list":"payload.jobs","uuid":"job_id"}',
    });
    expect(settings.listFields).toEqual({ list: 'payload.jobs', uuid: 'job_id' });
    expect(() =>
      scanSettingsFromEnv({ RESULTS_BUCKET: 'results-bucket', SCAN_LIST_FIELDS: '{"list":"a b"}' }),
    ).toThrow(/SCAN_LIST_FIELDS\.list/);
    expect(() => scanSettingsFromEnv({ RESULTS_BUCKET: 'results-bucket', SCAN_LIST_FIELDS: '{' })).toThrow(
      /SCAN_LIST_FIELDS.*not valid JSON/,
    );
  });

  it('reads the poll settings and a partial status vocabulary', () => {
    // Act
    const settings = scanSettingsFromEnv({
      RESULTS_BUCKET: 'results-bucket',
      POLL_MIN_WAIT_SECONDS: '5',
      POLL_MAX_WAIT_SECONDS: '60',
      POLL_GROWTH_FACTOR: '2',
      SCAN_DEADLINE_SECONDS: '7200',
      STATUS_VOCABULARY: '{"succeeded":["all_done"]}',
    });

    // Assess
    expect(settings.poll).toEqual({
      minWaitSeconds: 5,
      maxWaitSeconds: 60,
      growthFactor: 2,
      deadlineSeconds: 7200,
    });
    expect(settings.statusVocabulary?.succeeded).toEqual(['all_done']);
    expect(settings.statusVocabulary?.failed.length).toBeGreaterThan(0);
  });

  it.each([
    [{ RESULTS_BUCKET: 'Bad_Bucket' }, 'RESULTS_BUCKET'],
    [{ POLL_MIN_WAIT_SECONDS: '0' }, 'POLL_MIN_WAIT_SECONDS'],
    [{ POLL_MAX_WAIT_SECONDS: 'abc' }, 'POLL_MAX_WAIT_SECONDS'],
    [{ POLL_MIN_WAIT_SECONDS: '600', POLL_MAX_WAIT_SECONDS: '60' }, 'POLL_MAX_WAIT_SECONDS'],
    [{ POLL_GROWTH_FACTOR: '0.5' }, 'POLL_GROWTH_FACTOR'],
    [{ POLL_MAX_WAIT_SECONDS: '15', SCAN_DEADLINE_SECONDS: '2592000' }, 'SCAN_DEADLINE_SECONDS'],
    [{ STATUS_VOCABULARY: '{"finished":["x"]}' }, 'STATUS_VOCABULARY'],
    [{ STATUS_VOCABULARY: 'not json' }, 'STATUS_VOCABULARY'],
  ])('names the variable of a bad setting (%o -> %s)', (overrides, variable) => {
    const error = thrownBy(ConfigurationError, () =>
      scanSettingsFromEnv({ RESULTS_BUCKET: 'results-bucket', ...overrides }),
    );
    expect(error.setting).toBe(variable);
  });

  it('refuses a part size below S3 minimum in code-built settings', () => {
    expect(() => createScanSettings({ resultsBucket: 'b', upload: { partSizeBytes: 1024 } })).toThrow(
      /upload.partSizeBytes: must be a whole number of bytes >= 5242880/,
    );
  });
});

describe('scanDepsFromEnvironment and the lazy Lambda entry point', () => {
  let s3: S3rverFixture;
  let sim: VendorSimulator;

  beforeAll(async () => {
    s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
    sim = await startSimulator({ pollsToFinish: 2 });
  });

  afterEach(() => {
    vi.unstubAllEnvs();
  });

  afterAll(async () => {
    await sim.close();
    await s3.close();
  });

  const tools = () => createObservability({ POWERTOOLS_LOG_LEVEL: 'SILENT' });
  const env = () => ({
    RESULTS_BUCKET,
    SCAN_API_URL: `${sim.url}/`,
    VENDOR_API_KEY_SECRET_ARN: SECRET_ARN,
    POWERTOOLS_SERVICE_NAME: 'scan-test',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });

  it.each([
    ['RESULTS_BUCKET', 'RESULTS_BUCKET'],
    ['SCAN_API_URL', 'SCAN_API_URL'],
    ['VENDOR_API_KEY_SECRET_ARN', 'VENDOR_API_KEY_SECRET_ARN'],
  ])('names %s when it is missing', (missing, variable) => {
    const error = thrownBy(ConfigurationError, () =>
      scanDepsFromEnvironment({ ...env(), [missing]: undefined }, tools()),
    );
    expect(error.setting).toBe(variable);
  });

  it('builds S3-only deps without a vendor URL or secret, and refuses any vendor call', async () => {
    // Prepare
    const deps = storageScanDepsFromEnvironment({ RESULTS_BUCKET, POWERTOOLS_LOG_LEVEL: 'SILENT' }, tools());

    // Act
    const call = deps.scanClient.getStatus('6f1c1f7e-64f7-4c55-9f1e-3f7a4f1b2c3d');

    // Assess
    await expect(call).rejects.toThrow(/no vendor access by design/);
    expect(deps.settings.resultsBucket).toBe(RESULTS_BUCKET);
  });

  it('builds deps whose scan client reads the key from the secret (SCAN_API_KEY_SECRET_ARN wins)', async () => {
    // Prepare
    const secrets = createStaticSecretReader({ 'scan-only-secret': JSON.stringify({ apiKey: sim.apiKey }) });
    const deps = scanDepsFromEnvironment({ ...env(), SCAN_API_KEY_SECRET_ARN: 'scan-only-secret' }, tools(), {
      secrets,
      s3: s3.client,
    });

    // Act
    const started = await createStartScanHandler(deps)({ domain: 'from-env.example.com' });

    // Assess
    expect(started.domain).toBe('from-env.example.com');
    expect(deps.settings.resultsBucket).toBe(RESULTS_BUCKET);
  });

  it('builds deps once per execution environment, and keeps reporting a configuration error until fixed', async () => {
    // Prepare
    let builds = 0;
    let currentEnv: Record<string, string | undefined> = { ...env(), SCAN_API_URL: undefined };
    const secrets = createStaticSecretReader({ [SECRET_ARN]: sim.apiKey });
    const build = (): ScanDeps => {
      builds += 1;
      return scanDepsFromEnvironment(currentEnv, tools(), { secrets, s3: s3.client });
    };
    const lambda = createLazyHandler({ deps: build, handler: createStartScanHandler, observability: tools });

    // Act
    const broken1 = lambda({ domain: 'a.example.com' });
    const broken2 = lambda({ domain: 'a.example.com' });
    await expect(broken1).rejects.toMatchObject({ name: 'ConfigurationError', setting: 'SCAN_API_URL' });
    await expect(broken2).rejects.toMatchObject({ name: 'ConfigurationError', setting: 'SCAN_API_URL' });
    currentEnv = env();
    await lambda({ domain: 'b.example.com' });
    await lambda({ domain: 'c.example.com' });

    // Assess
    expect(builds).toBe(3);
  });

  it('makes the exported Lambda handler fail with a ConfigurationError naming the variable', async () => {
    // Prepare
    vi.stubEnv('RESULTS_BUCKET', '');

    // Act
    const attempt = startScanLambda({ domain: 'example.com' });

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'ConfigurationError', setting: 'RESULTS_BUCKET' });
  });
});

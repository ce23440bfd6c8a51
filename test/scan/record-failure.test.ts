import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ERROR_MESSAGE_BYTES } from '#lambdas/platform/redaction/caught';
import type { ScanInProgress } from '#lambdas/scan/contracts';
import type { ScanApi, ScanDeps } from '#lambdas/scan/deps';
import { createScanDeps } from '#lambdas/scan/deps';
import { type RecordScanFailureInput, recordScanFailure } from '#lambdas/scan/record-scan-failure';
import { createScanSettings } from '#lambdas/scan/settings';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { createMemoryLogger, type MemoryLogger } from '../kit/loggers.ts';
import { readJson } from '../kit/s3.ts';
import { manualClock, RESULTS_BUCKET } from './fixture.ts';

const UUID = '0b4c8a1e-7d2f-4c3b-9a8e-1f2d3c4b5a69';
const PREFIX = `scans/example.com/2026/11/20/${UUID}/`;

/** The vendor is never called when recording a failure. */
const noVendor = new Proxy({} as ScanApi, {
  get: () => () => Promise.reject(new Error('the vendor must not be called')),
});

let s3: S3rverFixture;
let logger: MemoryLogger;
let deps: ScanDeps;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
});

afterAll(async () => {
  await s3.close();
});

beforeEach(() => {
  logger = createMemoryLogger();
  deps = createScanDeps({
    s3: s3.client,
    scanClient: noVendor,
    logger,
    clock: manualClock(new Date('2026-11-21T08:00:00.000Z')),
    settings: createScanSettings({ resultsBucket: RESULTS_BUCKET, poll: { deadlineSeconds: 3600 } }),
  });
});

function inProgress(overrides: Partial<ScanInProgress> = {}): ScanInProgress {
  return {
    domain: 'example.com',
    runId: 'run-7',
    scanUuid: UUID,
    outputPrefix: PREFIX,
    poll: {
      attempt: 12,
      nextWaitSeconds: 300,
      waitedSeconds: 3600,
      startedAt: '2026-11-20T10:00:00.000Z',
      deadlineExceeded: true,
    },
    status: {
      state: 'running',
      vendorStatus: 'running',
      progress: 40,
      raw: '{"status":"running"}',
      rawTruncated: false,
    },
    ...overrides,
  };
}

/** A Lambda error as Step Functions puts it into $.caught on AWS. */
function awsCaught(errorType: string, errorMessage: string) {
  return {
    Error: errorType,
    Cause: JSON.stringify({
      errorType,
      errorMessage,
      trace: [`${errorType}: ${errorMessage}`, '    at ScanClient.getStatus (/var/task/index.mjs:1:2345)'],
    }),
  };
}

describe('recordScanFailure', () => {
  it.each([
    ['ScanFailed', 'failed'],
    ['ScanTimedOut', 'timed_out'],
    ['ScanRejected', 'rejected'],
    ['PollFailed', 'failed'],
    ['OutputFetchFailed', 'failed'],
    ['ManifestFailed', 'failed'],
  ])('records %s as a ScanOutcome in state %s and returns it as the Fail cause', async (failure, state) => {
    // Act
    const result = await recordScanFailure(deps, { ...inProgress(), failure: { error: failure } });

    // Assess
    expect(result.failure.error).toBe(failure);
    const outcome = JSON.parse(result.failure.cause);
    expect(outcome).toMatchObject({ domain: 'example.com', state, scanUuid: UUID, outputPrefix: PREFIX });
    expect(outcome.manifestKey).toBeUndefined();
    expect(result.failureKey).toBe(`${PREFIX}failure.json`);
    const record = await readJson(s3.client, RESULTS_BUCKET, `${PREFIX}failure.json`);
    expect(record).toMatchObject({
      schemaVersion: 1,
      failure,
      outcome,
      runId: 'run-7',
      recordedAt: '2026-11-21T08:00:00.000Z',
    });
  });

  it('describes a timed-out scan by its deadline, polls and last status', async () => {
    const result = await recordScanFailure(deps, { ...inProgress(), failure: { error: 'ScanTimedOut' } });
    expect(JSON.parse(result.failure.cause).error).toEqual({
      name: 'ScanTimedOut',
      message: `Scan ${UUID} did not finish within 3600 s (12 polls, 3600 s of waits); last status "running"`,
    });
  });

  it('takes the error name and message from an AWS Lambda error cause, without the stack trace', async () => {
    // Act
    const result = await recordScanFailure(deps, {
      ...inProgress(),
      failure: { error: 'PollFailed' },
      caught: awsCaught(
        'VendorUnavailableError',
        'scan.getStatus failed with HTTP 503 (vendor request id r-1)',
      ),
    });

    // Assess
    expect(JSON.parse(result.failure.cause).error).toEqual({
      name: 'VendorUnavailableError',
      message: 'scan.getStatus failed with HTTP 503 (vendor request id r-1)',
    });
    expect(result.failure.cause).not.toContain('index.mjs');
  });

  it('takes the plain message of a local run as the message, stripping a stack trace', async () => {
    const result = await recordScanFailure(deps, {
      ...inProgress(),
      failure: { error: 'OutputFetchFailed' },
      caught: {
        Error: 'VendorNetworkError',
        Cause:
          'scan.getReport failed on the network (ECONNRESET)\n    at guardBody (http.ts:12:3)\n    at next (x.ts:1:1)',
      },
    });
    expect(JSON.parse(result.failure.cause).error).toEqual({
      name: 'VendorNetworkError',
      message: 'scan.getReport failed on the network (ECONNRESET)',
    });
  });

  it('writes a rejected start without a scan uuid under rejected-<hash>, with "invalid" for a bad domain', async () => {
    // Prepare
    const input: RecordScanFailureInput = {
      domain: 'not a domain!',
      runId: 'run-9',
      failure: { error: 'ScanRejected' },
      caught: awsCaught('InvalidInputError', 'Invalid domain: contains a space'),
    };

    // Act
    const first = await recordScanFailure(deps, input);
    const again = await recordScanFailure(deps, input);
    const other = await recordScanFailure(deps, {
      ...input,
      caught: awsCaught('VendorAuthError', 'refused'),
    });

    // Assess
    expect(first.failureKey).toMatch(/^scans\/invalid\/2026\/11\/21\/rejected-[0-9a-f]{16}\/failure\.json$/);
    expect(again.failureKey).toBe(first.failureKey);
    expect(other.failureKey).not.toBe(first.failureKey);
    expect(JSON.parse(first.failure.cause)).toEqual({
      domain: 'not a domain!',
      state: 'rejected',
      error: { name: 'InvalidInputError', message: 'Invalid domain: contains a space' },
    });
    expect((await readJson(s3.client, RESULTS_BUCKET, first.failureKey ?? '')).outcome).toMatchObject({
      state: 'rejected',
    });
  });

  it('files a valid domain that the vendor refused under its own folder', async () => {
    const result = await recordScanFailure(deps, {
      domain: 'Example.ORG',
      failure: { error: 'ScanRejected' },
      caught: awsCaught('VendorAuthError', 'scan.startScan was refused with HTTP 401'),
    });
    expect(result.failureKey).toMatch(
      /^scans\/example\.org\/2026\/11\/21\/rejected-[0-9a-f]{16}\/failure\.json$/,
    );
    expect(JSON.parse(result.failure.cause)).toMatchObject({ domain: 'example.org', state: 'rejected' });
  });

  it.each([
    ['null', null],
    ['a string', 'States.TaskFailed'],
    ['numbers instead of strings', { Error: 42, Cause: 17 }],
    ['a Cause that is a JSON array', { Error: 'Boom', Cause: '[1,2,3]' }],
    ['a Cause that is truncated JSON', { Error: 'Boom', Cause: '{"errorType":"X","errorMess' }],
    ['an empty object', {}],
    ['an object Cause', { Error: 'Lambda.Unknown', Cause: { errorMessage: 'odd' } }],
  ])('never throws for a malformed caught payload (%s)', async (_label, caught) => {
    // Act
    const result = await recordScanFailure(deps, {
      ...inProgress(),
      failure: { error: 'PollFailed' },
      caught,
    } as unknown as RecordScanFailureInput);

    // Assess
    const outcome = JSON.parse(result.failure.cause);
    expect(result.failure.error).toBe('PollFailed');
    expect(outcome.state).toBe('failed');
    expect(typeof outcome.error.name).toBe('string');
    expect(typeof outcome.error.message).toBe('string');
  });

  it('never throws when the failure label, domain and poll state are missing or malformed', async () => {
    // Act
    const result = await recordScanFailure(deps, {
      domain: 42,
      scanUuid: 'not-a-uuid',
      outputPrefix: '../../etc/',
      poll: 'soon',
      failure: null,
    } as unknown as RecordScanFailureInput);

    // Assess
    expect(result.failure.error).toBe('ScanFailed');
    expect(JSON.parse(result.failure.cause)).toMatchObject({ domain: '', state: 'failed' });
    expect(result.failureKey).toMatch(/^scans\/invalid\/.+\/rejected-[0-9a-f]{16}\/failure\.json$/);
  });

  it('keeps the message within 1 KiB', async () => {
    const result = await recordScanFailure(deps, {
      ...inProgress(),
      failure: { error: 'OutputFetchFailed' },
      caught: awsCaught('VendorResponseError', 'x'.repeat(2 * 1024 * 1024)),
    });
    const message = JSON.parse(result.failure.cause).error.message as string;
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
    expect(message).toMatch(/\[truncated\]$/);
  });

  it('keeps credential-looking text out of the outcome, the record and the logs', async () => {
    // Prepare
    const key = 'sk_sim_5f2a9c1b7e3d4a6f8b0c';
    const signed = 'https://storage.example/r.zip?X-Amz-Signature=abcdef0123456789&X-Amz-Credential=AKIA123';

    // Act
    const result = await recordScanFailure(deps, {
      ...inProgress(),
      failure: { error: 'OutputFetchFailed' },
      caught: awsCaught(
        'Error',
        `request with Authorization: Bearer ${key} to ${signed} failed; api_key=${key}`,
      ),
    });

    // Assess
    const record = JSON.stringify(await readJson(s3.client, RESULTS_BUCKET, result.failureKey ?? ''));
    for (const text of [result.failure.cause, record, logger.text()]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain('abcdef0123456789');
      expect(text).not.toContain('AKIA123');
    }
    expect(JSON.parse(result.failure.cause).error.message).toContain('[REDACTED]');
  });

  it('still returns the outcome when failure.json cannot be written, and logs the write error', async () => {
    // Prepare
    const brokenS3 = new S3Client({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      maxAttempts: 1,
    });
    const brokenDeps = { ...deps, s3: brokenS3 };

    // Act
    const result = await recordScanFailure(brokenDeps, { ...inProgress(), failure: { error: 'ScanFailed' } });

    // Assess
    expect(result.failureKey).toBeUndefined();
    expect(JSON.parse(result.failure.cause)).toMatchObject({ state: 'failed', scanUuid: UUID });
    expect(logger.lines.find((l) => l.level === 'error')?.message).toBe('Could not write the failure record');
    brokenS3.destroy();
  });
});

/**
 * Step behaviour that the simulator cannot produce (no Content-Type, an unknown Content-Encoding,
 * huge status bodies), with a fake vendor behind the ScanApi interface and s3rver for storage.
 */
import { Readable } from 'node:stream';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanInProgress } from '#lambdas/scan/contracts';
import type { ScanApi, ScanDeps } from '#lambdas/scan/deps';
import { createScanDeps, withLogKeys } from '#lambdas/scan/deps';
import { extensionFor, fetchScanOutput } from '#lambdas/scan/fetch-scan-output';
import { MAX_RAW_STATUS_BYTES, pollScanStatus, truncateUtf8 } from '#lambdas/scan/poll-scan-status';
import { createScanSettings } from '#lambdas/scan/settings';
import type { ScanStatus } from '#lambdas/vendor-api/scan/types';
import type { VendorDownload } from '#lambdas/vendor-api/transport/types';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { manualClock, RESULTS_BUCKET, s3ObjectDigest } from './fixture.ts';

const UUID = '6f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b';

let s3: S3rverFixture;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
});

afterAll(async () => {
  await s3.close();
});

function download(body: Buffer, overrides: Partial<VendorDownload> = {}): VendorDownload {
  return {
    body: Readable.from([body]),
    contentType: undefined,
    contentLength: body.length,
    etag: undefined,
    contentEncoding: undefined,
    finalUrl: 'https://vendor.example/report',
    redirects: 0,
    ...overrides,
  };
}

/** A vendor that answers every call with what the test sets. */
function fakeVendor(answers: { status?: ScanStatus; output?: () => VendorDownload }): ScanApi {
  const missing = () => Promise.reject(new Error('not scripted'));
  return {
    startScan: missing,
    getStatus: async () => answers.status ?? Promise.reject(new Error('not scripted')),
    getOutput: async () => answers.output?.() ?? Promise.reject(new Error('not scripted')),
    deleteScan: missing,
    listScans: missing,
  };
}

function depsWith(scanClient: ScanApi): ScanDeps {
  return createScanDeps({
    s3: s3.client,
    scanClient,
    logger: createMemoryLogger(),
    clock: manualClock(),
    settings: createScanSettings({ resultsBucket: RESULTS_BUCKET }),
  });
}

const state: ScanInProgress = {
  domain: 'unit.example',
  runId: 'adhoc',
  scanUuid: UUID,
  outputPrefix: `scans/unit.example/2026/11/20/${UUID}/`,
  poll: {
    attempt: 0,
    nextWaitSeconds: 15,
    waitedSeconds: 0,
    startedAt: '2026-11-20T10:00:00.000Z',
    deadlineExceeded: false,
  },
};

describe('extensionFor', () => {
  it.each([
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['application/problem+json', 'json'],
    ['application/x-ndjson', 'ndjson'],
    ['application/ndjson', 'ndjson'],
    ['text/plain; charset=utf-8', 'txt'],
    ['TEXT/HTML', 'html'],
    ['application/xml', 'xml'],
    ['text/xml', 'xml'],
    ['application/zip', 'zip'],
    ['application/pdf', 'pdf'],
    ['text/csv', 'bin'],
    ['application/octet-stream', 'bin'],
    [undefined, 'bin'],
    ['', 'bin'],
  ])('maps %s to .%s', (contentType, extension) => {
    expect(extensionFor(contentType)).toBe(extension);
  });
});

describe('fetchScanOutput', () => {
  it('stores an output without Content-Type as application/octet-stream under .bin', async () => {
    // Prepare
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252]);
    const deps = depsWith(fakeVendor({ output: () => download(bytes) }));

    // Act
    const stored = await fetchScanOutput(deps, { ...state, output: 'debug' });

    // Assess
    expect(stored).toMatchObject({
      key: `${state.outputPrefix}debug.bin`,
      size: 6,
      contentType: 'application/octet-stream',
    });
    const inS3 = await s3ObjectDigest(s3.client, stored.key);
    expect(inS3).toMatchObject({ size: 6, sha256: stored.sha256, contentType: 'application/octet-stream' });
    expect(inS3.metadata['source-etag']).toBeUndefined();
  });

  it('stores bytes in an encoding the client could not decode as sent, labelled with that encoding', async () => {
    // Prepare
    const bytes = Buffer.from('zstd-compressed-bytes');
    const deps = depsWith(
      fakeVendor({
        output: () => download(bytes, { contentType: 'text/plain', contentEncoding: 'zstd', etag: '"v1"' }),
      }),
    );

    // Act
    const stored = await fetchScanOutput(deps, { ...state, output: 'logs' });

    // Assess
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: RESULTS_BUCKET, Key: stored.key }));
    expect(head.ContentEncoding).toBe('zstd');
    expect(head.Metadata).toMatchObject({ 'source-etag': '"v1"', sha256: stored.sha256 });
  });

  it('refuses a body shorter than its Content-Length as a VendorNetworkError and stores nothing', async () => {
    // Prepare
    const deps = depsWith(
      fakeVendor({
        output: () => download(Buffer.from('short'), { contentType: 'application/json', contentLength: 500 }),
      }),
    );

    // Act
    const attempt = fetchScanOutput(deps, { ...state, output: 'report' });

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'VendorNetworkError', code: 'TRUNCATED_BODY' });
  });
});

describe('pollScanStatus', () => {
  it('keeps at most 8 KiB of the raw status body, cut on a character boundary, and says so', async () => {
    // Prepare
    const raw = `{"status":"running","log":"${'é'.repeat(10_000)}"}`;
    const deps = depsWith(
      fakeVendor({
        status: {
          state: 'running',
          vendorStatus: 'running',
          progress: 10,
          raw,
          contentType: 'application/json',
        },
      }),
    );

    // Act
    const next = await pollScanStatus(deps, state);

    // Assess
    expect(next.status?.rawTruncated).toBe(true);
    expect(Buffer.byteLength(next.status?.raw ?? '')).toBeLessThanOrEqual(MAX_RAW_STATUS_BYTES);
    expect(next.status?.raw).not.toContain('\uFFFD');
    expect(raw.startsWith(next.status?.raw ?? 'x')).toBe(true);
  });

  it('keeps a small raw body unchanged', () => {
    expect(truncateUtf8('{"status":"queued"}', MAX_RAW_STATUS_BYTES)).toEqual({
      text: '{"status":"queued"}',
      truncated: false,
    });
  });
});

describe('withLogKeys', () => {
  it('adds the keys to each line of a logger without createChild, leaving the shared logger unchanged', () => {
    // Prepare
    const lines: { message: string; extra: Record<string, unknown> }[] = [];
    const plain = {
      debug: () => {},
      info: (message: string, ...extra: Record<string, unknown>[]) => {
        lines.push({ message, extra: Object.assign({}, ...extra) });
      },
      warn: () => {},
      error: () => {},
    };
    const deps = { ...depsWith(fakeVendor({})), logger: plain };

    // Act
    withLogKeys(deps, { domain: 'a.example', scanUuid: undefined }).logger.info('tagged', { attempt: 1 });
    deps.logger.info('shared');

    // Assess
    expect(lines).toEqual([
      { message: 'tagged', extra: { domain: 'a.example', attempt: 1 } },
      { message: 'shared', extra: {} },
    ]);
  });
});

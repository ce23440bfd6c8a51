/**
 * Fault matrix, unframed answers: a 2xx download with neither Content-Length nor chunked framing
 * ends when the connection closes, so its end cannot be proven. Each shape goes through the real
 * fetch step into the embedded S3: none may store a byte, and the idempotent fetch tries again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VendorNetworkError } from '#lambdas/platform/errors';
import { createScanDeps } from '#lambdas/scan/deps';
import { fetchScanOutput } from '#lambdas/scan/fetch-scan-output';
import { createScanSettings } from '#lambdas/scan/settings';
import { startScan } from '#lambdas/scan/start-scan';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import type { Fault, VendorSimulator } from '#local/simulator/types';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { listKeys } from '../kit/s3.ts';
import { startSimulator } from '../kit/simulator.ts';
import {
  closeTestClients,
  createTestDeps,
  pollUntilDone,
  RESULTS_BUCKET,
  s3ObjectDigest,
  vendorOutputDigest,
} from './fixture.ts';

const MiB = 1024 * 1024;
/** The three shapes of the issue: complete, cut short with a clean close, cut short with a reset. */
const SHAPES: [string, (size: number) => Extract<Fault, { type: 'unframed' }>][] = [
  ['complete, then a clean close', () => ({ type: 'unframed' })],
  [
    'cut half-way with a clean close',
    (size) => ({ type: 'unframed', afterBytes: Math.floor(size / 2), end: 'close' }),
  ],
  [
    'cut half-way with a reset',
    (size) => ({ type: 'unframed', afterBytes: Math.floor(size / 2), end: 'reset' }),
  ],
];

let s3: S3rverFixture;
let small: VendorSimulator;
let large: VendorSimulator;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
  small = await startSimulator({ pollsToFinish: 2, reportBytes: 200 * 1024, logsBytes: 300 * 1024 });
  // Above the 5 MiB part size used below: the multipart path, with S3 applying backpressure.
  large = await startSimulator({ pollsToFinish: 2, reportBytes: 12 * MiB });
});

afterEach(async () => {
  small.clearFaults();
  large.clearFaults();
  await closeTestClients();
});

afterAll(async () => {
  await small.close();
  await large.close();
  await s3.close();
});

describe.each([
  ['a single PUT (small report)', () => small, 200 * 1024],
  ['a multipart upload (12 MiB report)', () => large, 12 * MiB],
])('fault matrix: an unframed report stored through %s', (_path, simulator, size) => {
  it.each(SHAPES)(
    'is refused when %s, with VendorUnframedBodyError and nothing stored',
    async (_shape, fault) => {
      // Prepare
      const sim = simulator();
      const bed = createTestDeps(s3.client, sim, { upload: { partSizeBytes: 5 * MiB } });
      const started = await startScan(bed.deps, { domain: `unframed-${size}.example.com` });
      const finished = await pollUntilDone(bed, started);
      sim.addFault({ api: 'scan', method: 'GET', path: '/report/', fault: fault(size) });

      // Act
      const error = await fetchScanOutput(bed.deps, { ...finished, output: 'report' }).catch(
        (e: unknown) => e,
      );

      // Assess: a named, retryable error; not one byte under the scan's prefix
      expect(error).toBeInstanceOf(VendorNetworkError);
      expect((error as Error).name).toBe('VendorUnframedBodyError');
      expect((error as VendorNetworkError).retryable).toBe(true);
      expect(await listKeys(s3.client, RESULTS_BUCKET, started.outputPrefix)).toEqual([]);
    },
  );
});

describe('fault matrix: unframed answers, continued', () => {
  it('refuses gzip logs sent unframed and cut at a gzip member boundary, storing nothing', async () => {
    // Prepare: the client asks for gzip, so the logs come compressed; cut them where a gzip member
    // could end, which a decoder alone would accept as a complete stream.
    const bed = createTestDeps(s3.client, small);
    const started = await startScan(bed.deps, { domain: 'gzip-cut.example.com' });
    const finished = await pollUntilDone(bed, started);
    small.addFault({
      api: 'scan',
      path: '/logs/',
      fault: { type: 'unframed', afterBytes: 10, end: 'close' },
    });

    // Act
    const attempt = fetchScanOutput(bed.deps, { ...finished, output: 'logs' });

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'VendorUnframedBodyError' });
    expect(await listKeys(s3.client, RESULTS_BUCKET, started.outputPrefix)).toEqual([]);
  });

  it('stores the verified bytes once the vendor answers with framing again: the idempotent fetch retries', async () => {
    // Prepare: a client that retries, and one unframed answer before framed ones
    const client = new ScanClient({
      baseUrl: small.url,
      credentials: async () => small.apiKey,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
    });
    const deps = createScanDeps({
      s3: s3.client,
      scanClient: client,
      logger: createMemoryLogger(),
      settings: createScanSettings({ resultsBucket: RESULTS_BUCKET }),
    });
    const bed = createTestDeps(s3.client, small);
    const started = await startScan(bed.deps, { domain: 'unframed-then-framed.example.com' });
    const finished = await pollUntilDone(bed, started);
    small.addFault({
      api: 'scan',
      path: '/report/',
      fault: { type: 'unframed', afterBytes: 1000, end: 'close' },
    });
    const before = small.requestCount('GET /report/{uuid}');

    try {
      // Act
      const stored = await fetchScanOutput(deps, { ...finished, output: 'report' });

      // Assess: two requests, and the stored bytes are exactly the vendor's
      expect(small.requestCount('GET /report/{uuid}') - before).toBe(2);
      const expected = await vendorOutputDigest(small, 'report', finished.scanUuid);
      expect(stored.sha256).toBe(expected.sha256);
      expect((await s3ObjectDigest(s3.client, stored.key)).sha256).toBe(expected.sha256);
    } finally {
      await client.close();
    }
  });
});

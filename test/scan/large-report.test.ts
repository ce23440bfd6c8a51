/**
 * Big outputs: streamed through the Lambda with bounded memory, and a failure after the multipart
 * upload started still leaves nothing behind. Kept in its own file so the memory figures are not
 * disturbed by other tests in the same process.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fetchScanOutput, startScan } from '#lambdas/scan/steps';
import type { VendorSimulator } from '#local/simulator/types';
import { recordS3Commands, type S3rverFixture, startS3rver } from '../../local/embedded-s3.ts';
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
const REPORT_BYTES = 96 * MiB;

let s3: S3rverFixture;
let sim: VendorSimulator;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
  sim = await startSimulator({ pollsToFinish: 0, reportBytes: REPORT_BYTES });
});

afterEach(async () => {
  sim.clearFaults();
  await closeTestClients();
});

afterAll(async () => {
  await sim.close();
  await s3.close();
});

/** Samples RSS every few milliseconds while `work` runs; returns the peak growth over the start. */
async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  globalThis.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, growth: peak - baseline };
  } finally {
    clearInterval(timer);
  }
}

describe('large outputs', () => {
  it('streams a 96 MiB report into S3 byte-identical, with memory growth below its size', async () => {
    // Prepare
    const bed = createTestDeps(s3.client, sim, { upload: { partSizeBytes: 5 * MiB, queueSize: 2 } });
    const started = await startScan(bed.deps, { domain: 'big.example.com' });
    const finished = await pollUntilDone(bed, started);
    // Warm up: the first large download and multipart upload of a process load code and fill
    // buffer pools (about 60 MiB of RSS once, whatever the size); only a second run says anything.
    await fetchScanOutput(bed.deps, { ...finished, output: 'report' });

    // Act
    const { result: stored, growth } = await peakRssGrowth(() =>
      fetchScanOutput(bed.deps, { ...finished, output: 'report' }),
    );

    // Assess
    const vendor = await vendorOutputDigest(sim, 'report', started.scanUuid);
    const inS3 = await s3ObjectDigest(s3.client, stored.key);
    expect(vendor.size).toBeGreaterThanOrEqual(REPORT_BYTES * 0.95);
    expect(stored).toMatchObject({ size: vendor.size, sha256: vendor.sha256 });
    expect(inS3).toMatchObject({ size: vendor.size, sha256: vendor.sha256, contentType: 'application/json' });
    expect(inS3.metadata.sha256).toBe(vendor.sha256);
    // Loose on purpose: RSS includes s3rver and the simulator in this process and uncollected
    // garbage (10-65 MiB measured here, whatever the size). A buffered body would add all 96 MiB.
    expect(growth).toBeLessThan(REPORT_BYTES);
  });

  it('aborts the multipart upload and stores nothing when the vendor resets the connection after several parts', async () => {
    // Prepare
    const client = s3.createClient();
    const commands = recordS3Commands(client);
    const bed = createTestDeps(client, sim, { upload: { partSizeBytes: 5 * MiB, queueSize: 2 } });
    const started = await startScan(bed.deps, { domain: 'big-reset.example.com' });
    const finished = await pollUntilDone(bed, started);
    sim.addFault({ api: 'scan', path: '/report/', fault: { type: 'reset-mid-body', afterBytes: 17 * MiB } });

    // Act
    const attempt = fetchScanOutput(bed.deps, { ...finished, output: 'report' });

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'VendorNetworkError' });
    expect(commands).toContain('UploadPartCommand');
    expect(commands).toContain('AbortMultipartUploadCommand');
    expect(commands).not.toContain('CompleteMultipartUploadCommand');
    expect(await listKeys(s3.client, RESULTS_BUCKET, started.outputPrefix)).toEqual([]);
  });
});

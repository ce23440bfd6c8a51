/**
 * A fetch task retried after its write succeeded (a Lambda.ServiceException after the handler
 * returned, a redrive) must never replace the verified object, whatever the vendor answers the
 * second time, and must leave nothing the manifest does not list. Real parts: the simulator over
 * loopback and the embedded S3.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ScanInProgress } from '#lambdas/scan/contracts';
import { fetchScanOutput, SCAN_STAGING_PREFIX, stagingPrefixOf } from '#lambdas/scan/fetch-scan-output';
import { SCAN_OUTPUT_NAMES } from '#lambdas/scan/scan-outputs';
import { startScan } from '#lambdas/scan/start-scan';
import { writeScanManifest } from '#lambdas/scan/write-scan-manifest';
import type { VendorSimulator } from '#local/simulator/types';
import { recordS3Commands, type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { listKeys, readJson } from '../kit/s3.ts';
import { startSimulator } from '../kit/simulator.ts';
import {
  closeTestClients,
  createTestDeps,
  pollUntilDone,
  RESULTS_BUCKET,
  type ScanTestBed,
  s3ObjectDigest,
} from './fixture.ts';

const MiB = 1024 * 1024;
let s3: S3rverFixture;
let small: VendorSimulator;
let large: VendorSimulator;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
  small = await startSimulator({ pollsToFinish: 2 });
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

async function finishedScan(bed: ScanTestBed, domain: string): Promise<ScanInProgress> {
  return pollUntilDone(bed, await startScan(bed.deps, { domain }));
}

describe.each([
  ['a single PUT (small report)', () => small],
  ['a staged multipart upload (12 MiB report)', () => large],
])('a fetch retried after its write, through %s', (_path, simulator) => {
  it('keeps the verified object when the second answer differs, and leaves no orphan of another type', async () => {
    // Prepare: the first attempt stores the real report
    const sim = simulator();
    const client = s3.createClient();
    const bed = createTestDeps(client, sim, { upload: { partSizeBytes: 5 * MiB } });
    const finished = await finishedScan(bed, `retried-${sim.url.slice(-5)}.example.com`);
    const first = await fetchScanOutput(bed.deps, { ...finished, output: 'report' });
    const firstDigest = await s3ObjectDigest(s3.client, first.key);
    // The vendor now answers with other bytes, of another Content-Type (so another extension)
    sim.addFault({
      api: 'scan',
      path: '/report/',
      times: 5,
      fault: { type: 'status', status: 200, body: 'tampered' },
    });
    const requestsBefore = sim.requestCount('GET /report/{uuid}');
    const writes = recordS3Commands(client, { withKeys: true });

    // Act: the retried task
    const second = await fetchScanOutput(bed.deps, { ...finished, output: 'report' });

    // Assess: the same verified object, untouched, not even downloaded again
    expect(second).toMatchObject({ key: first.key, sha256: first.sha256, size: first.size });
    expect(await s3ObjectDigest(s3.client, first.key)).toEqual(firstDigest);
    expect(firstDigest.sha256).toBe(first.sha256);
    expect(sim.requestCount('GET /report/{uuid}')).toBe(requestsBefore);
    expect(writes.filter((command) => /^(Put|Copy|CreateMultipart|Upload)/.test(command))).toEqual([]);
    expect(await listKeys(s3.client, RESULTS_BUCKET, finished.outputPrefix)).toEqual([first.key]);
  });
});

describe('leftovers and the manifest', () => {
  it('stores a large output through staging, leaving nothing staged', async () => {
    // Prepare
    const bed = createTestDeps(s3.client, large, { upload: { partSizeBytes: 5 * MiB } });
    const finished = await finishedScan(bed, 'staged.example.com');

    // Act
    const stored = await fetchScanOutput(bed.deps, { ...finished, output: 'report' });

    // Assess
    expect(stored.size).toBeGreaterThan(5 * MiB);
    expect((await s3ObjectDigest(s3.client, stored.key)).metadata.sha256).toBe(stored.sha256);
    expect(await listKeys(s3.client, RESULTS_BUCKET, finished.outputPrefix)).toEqual([stored.key]);
    expect(
      await listKeys(s3.client, RESULTS_BUCKET, `${SCAN_STAGING_PREFIX}${finished.outputPrefix}`),
    ).toEqual([]);
  });

  it('removes what an attempt that died before verification left, then stores the verified output', async () => {
    // Prepare: a staged upload never promoted, and a final object without a digest
    const bed = createTestDeps(s3.client, small);
    const finished = await finishedScan(bed, 'crashed.example.com');
    for (const key of [
      `${stagingPrefixOf(finished.outputPrefix, 'report')}dead`,
      `${finished.outputPrefix}report.bin`,
    ]) {
      await s3.client.send(new PutObjectCommand({ Bucket: RESULTS_BUCKET, Key: key, Body: 'half' }));
    }

    // Act
    const stored = await fetchScanOutput(bed.deps, { ...finished, output: 'report' });

    // Assess
    expect(await listKeys(s3.client, RESULTS_BUCKET, finished.outputPrefix)).toEqual([stored.key]);
    expect(
      await listKeys(s3.client, RESULTS_BUCKET, `${SCAN_STAGING_PREFIX}${finished.outputPrefix}`),
    ).toEqual([]);
  });

  it('writes a manifest that accounts for exactly the objects under the scan prefix', async () => {
    // Prepare: every output of the table, each fetched twice as a retried Parallel would
    const bed = createTestDeps(s3.client, small);
    const finished = await finishedScan(bed, 'manifested.example.com');
    const outputs = SCAN_OUTPUT_NAMES;
    const stored = await Promise.all(
      outputs.map((output) => fetchScanOutput(bed.deps, { ...finished, output })),
    );
    await Promise.all(outputs.map((output) => fetchScanOutput(bed.deps, { ...finished, output })));

    // Act
    const outcome = await writeScanManifest(bed.deps, { ...finished, stored });

    // Assess
    const manifest = (await readJson(s3.client, RESULTS_BUCKET, outcome.manifestKey ?? '')) as {
      objects: { key: string }[];
      otherObjects: { key: string }[];
    };
    const listed = [...manifest.objects, ...manifest.otherObjects].map((object) => object.key);
    expect([...listed, outcome.manifestKey].sort()).toEqual(
      await listKeys(s3.client, RESULTS_BUCKET, finished.outputPrefix),
    );
    expect(manifest.otherObjects).toEqual([]);
  });
});

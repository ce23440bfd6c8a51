/**
 * The scan workflow steps against the vendor simulator and s3rver on loopback, called in the order
 * the ScanDomain state machine calls them.
 */
import { DeleteObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError, VendorNetworkError, VendorThrottledError } from '#lambdas/platform/errors';
import type { ScanInProgress, StoredObject } from '#lambdas/scan/contracts';
import { deleteScanAtVendor } from '#lambdas/scan/delete-scan';
import { createScanDeps } from '#lambdas/scan/deps';
import { fetchScanOutput } from '#lambdas/scan/fetch-scan-output';
import { LEARNED_DURATIONS_PREFIX, learnedDurationsKey } from '#lambdas/scan/learned-durations';
import { pollScanStatus } from '#lambdas/scan/poll-scan-status';
import { recordScanFailure } from '#lambdas/scan/record-scan-failure';
import { SCAN_OUTPUT_NAMES } from '#lambdas/scan/scan-outputs';
import { createScanSettings } from '#lambdas/scan/settings';
import { startScan } from '#lambdas/scan/start-scan';
import { writeScanManifest } from '#lambdas/scan/write-scan-manifest';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import type { VendorSimulator } from '#local/simulator/types';
import { recordS3Commands, type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { listKeys, objectExists } from '../kit/s3.ts';
import { startSimulator } from '../kit/simulator.ts';
import {
  closeTestClients,
  createTestDeps,
  manualClock,
  pollUntilDone,
  RESULTS_BUCKET,
  type ScanTestBed,
  s3ObjectDigest,
  vendorOutputDigest,
} from './fixture.ts';

const OUTPUTS = SCAN_OUTPUT_NAMES;

let s3: S3rverFixture;
let sim: VendorSimulator;
let bed: ScanTestBed;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
  sim = await startSimulator({ pollsToFinish: 2, failingDomains: ['broken.example.com'] });
});

afterEach(async () => {
  sim.clearFaults();
  await closeTestClients();
  // Each test plans its polls from nothing learned (test/scan/learned-durations.test.ts learns).
  for (const Key of await listKeys(s3.client, RESULTS_BUCKET, LEARNED_DURATIONS_PREFIX)) {
    await s3.client.send(new DeleteObjectCommand({ Bucket: RESULTS_BUCKET, Key }));
  }
});

afterAll(async () => {
  await sim.close();
  await s3.close();
});

async function fetchAll(state: ScanInProgress): Promise<StoredObject[]> {
  // Like the Parallel state: three concurrent branches.
  return Promise.all(OUTPUTS.map((output) => fetchScanOutput(bed.deps, { ...state, output })));
}

describe('a scan that succeeds', () => {
  it('stores report, logs and debug byte-identical with their content types and metadata, then the manifest last', async () => {
    // Prepare
    const client = s3.createClient();
    const writes = recordS3Commands(client, { withKeys: true });
    bed = createTestDeps(client, sim);

    // Act
    const started = await startScan(bed.deps, {
      domain: 'https://WWW.Example.COM/some/path',
      runId: 'run-1',
    });
    const finished = await pollUntilDone(bed, started);
    const stored = await fetchAll(finished);
    const outcome = await writeScanManifest(bed.deps, { ...finished, stored });

    // Assess: the state
    expect(started).toMatchObject({
      domain: 'www.example.com',
      runId: 'run-1',
      outputPrefix: `scans/www.example.com/2026/11/20/${started.scanUuid}/`,
      poll: { attempt: 0, nextWaitSeconds: 60, waitedSeconds: 0, deadlineExceeded: false },
    });
    expect(finished.status).toMatchObject({
      state: 'succeeded',
      vendorStatus: 'completed',
      rawTruncated: false,
    });
    expect(JSON.parse(finished.status?.raw ?? '{}')).toMatchObject({
      uuid: started.scanUuid,
      status: 'completed',
    });
    expect(stored.map((s) => s.key)).toEqual([
      `${started.outputPrefix}report.json`,
      `${started.outputPrefix}logs.txt`,
      `${started.outputPrefix}debug.ndjson`,
    ]);

    // Assess: every object equals what the vendor serves, with its content type and metadata
    for (const object of stored) {
      const vendor = await vendorOutputDigest(sim, object.name, started.scanUuid);
      const inS3 = await s3ObjectDigest(s3.client, object.key);
      expect(inS3.sha256).toBe(vendor.sha256);
      expect(inS3.size).toBe(vendor.size);
      expect(object).toMatchObject({ bucket: RESULTS_BUCKET, size: vendor.size, sha256: vendor.sha256 });
      expect(inS3.contentType).toBe(vendor.contentType);
      expect(object.contentType).toBe(vendor.contentType);
      expect(inS3.metadata).toMatchObject({
        domain: 'www.example.com',
        'scan-uuid': started.scanUuid,
        sha256: vendor.sha256,
      });
      expect(inS3.metadata['source-etag']).toMatch(/^".+"$/);
    }

    // Assess: the manifest, written last
    const manifestKey = `${started.outputPrefix}manifest.json`;
    expect(outcome).toEqual({
      domain: 'www.example.com',
      state: 'succeeded',
      scanUuid: started.scanUuid,
      outputPrefix: started.outputPrefix,
      manifestKey,
      error: undefined,
    });
    const puts = writes.filter((w) => w.startsWith('PutObjectCommand') || w.startsWith('CopyObjectCommand'));
    expect(puts.filter((w) => w.includes(started.outputPrefix)).at(-1)).toBe(
      `PutObjectCommand ${manifestKey}`,
    );
    // Only then is the scan's duration learned, outside the scan's folder.
    expect(puts.at(-1)).toBe(`PutObjectCommand ${learnedDurationsKey('www.example.com')}`);
    const manifestObject = await s3.client.send(
      new GetObjectCommand({ Bucket: RESULTS_BUCKET, Key: manifestKey }),
    );
    expect(manifestObject.ContentType).toBe('application/json');
    const manifest = JSON.parse(await (manifestObject.Body?.transformToString() ?? Promise.resolve('{}')));
    expect(manifest).toEqual({
      schemaVersion: 1,
      domain: 'www.example.com',
      scanUuid: started.scanUuid,
      runId: 'run-1',
      origin: 'workflow',
      objects: stored.map((s) => ({
        name: s.name,
        key: s.key,
        size: s.size,
        sha256: s.sha256,
        contentType: s.contentType,
        versionId: null,
      })),
      otherObjects: [],
      finalStatus: {
        state: 'succeeded',
        vendorStatus: 'completed',
        progress: 100,
        raw: finished.status?.raw,
        rawTruncated: false,
      },
      timings: {
        startedAt: '2026-11-20T10:00:00.000Z',
        finishedAt: bed.clock().toISOString(),
        pollAttempts: finished.poll.attempt,
        waitedSeconds: finished.poll.waitedSeconds,
        elapsedSeconds: finished.poll.waitedSeconds,
      },
    });
    expect(bed.logger.text()).not.toContain(sim.apiKey);
  });

  it('logs each status transition with domain, scan uuid, vendor status, attempt and next wait', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    sim.scriptScan('transitions.example.com', { outcome: 'succeed', pollsToFinish: 4 });
    const started = await startScan(bed.deps, { domain: 'transitions.example.com' });

    // Act
    await pollUntilDone(bed, started);

    // Assess
    const transitions = bed.logger.lines.filter((l) => l.message === 'Scan status changed');
    expect(transitions.map((l) => l.fields.vendorStatus)).toEqual(['queued', 'running', 'completed']);
    expect(transitions[0]?.fields).toMatchObject({
      domain: 'transitions.example.com',
      scanUuid: started.scanUuid,
      state: 'pending',
      attempt: 1,
      // 25 % of the age (60 s) is below the minimum wait.
      nextWaitSeconds: 60,
    });
    expect(started.runId).toBe('adhoc');
  });

  it('deletes the scan at the vendor, and treats an already deleted scan as deleted', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    const started = await startScan(bed.deps, { domain: 'cleanup.example.com' });

    // Act
    const first = await deleteScanAtVendor(bed.deps, started);
    const again = await deleteScanAtVendor(bed.deps, started);

    // Assess
    expect(first).toMatchObject({ scanUuid: started.scanUuid, deletedAtVendor: true });
    expect(again.deletedAtVendor).toBe(true);
  });
});

describe('a scan that does not succeed', () => {
  it('records a failed scan as failure.json next to where its outputs would be, without a manifest', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    const started = await startScan(bed.deps, { domain: 'broken.example.com', runId: 'run-2' });

    // Act
    const finished = await pollUntilDone(bed, started);
    const recorded = await recordScanFailure(bed.deps, { ...finished, failure: { error: 'ScanFailed' } });

    // Assess
    expect(finished.status?.state).toBe('failed');
    expect(recorded.failure.error).toBe('ScanFailed');
    expect(JSON.parse(recorded.failure.cause)).toEqual({
      domain: 'broken.example.com',
      state: 'failed',
      scanUuid: started.scanUuid,
      outputPrefix: started.outputPrefix,
      error: {
        name: 'ScanFailed',
        message: `The vendor reported scan ${started.scanUuid} as failed (status "failed")`,
      },
    });
    expect(await listKeys(s3.client, RESULTS_BUCKET, started.outputPrefix)).toEqual([
      `${started.outputPrefix}failure.json`,
    ]);
  });

  it('leaves the poll loop at the deadline for a scan that never finishes, and records it as timed out', async () => {
    // Prepare
    sim.scriptScan('forever.example.com', { outcome: 'never-finish' });
    bed = createTestDeps(s3.client, sim, {
      poll: { minWaitSeconds: 1, maxWaitSeconds: 4, growthFactor: 2, deadlineSeconds: 20 },
    });
    const started = await startScan(bed.deps, { domain: 'forever.example.com' });

    // Act
    const finished = await pollUntilDone(bed, started);
    const recorded = await recordScanFailure(bed.deps, { ...finished, failure: { error: 'ScanTimedOut' } });

    // Assess: each wait is the age (growth 2) within 1..4 s: 1, 1, 2, 4, 4, 4, 4 -> the seventh poll is at 20 s
    expect(finished.poll).toMatchObject({ deadlineExceeded: true, waitedSeconds: 20, attempt: 7 });
    expect(finished.status?.state).not.toMatch(/succeeded|failed/);
    const outcome = JSON.parse(recorded.failure.cause);
    expect(outcome).toMatchObject({
      state: 'timed_out',
      scanUuid: started.scanUuid,
      error: { name: 'ScanTimedOut' },
    });
    expect(outcome.error.message).toContain('did not finish within 20 s (7 polls, 20 s of waits)');
    expect(recorded.failureKey).toBe(`${started.outputPrefix}failure.json`);
  });

  it('treats a status word outside the vocabulary as running until the deadline', async () => {
    // Prepare: a vocabulary that does not know the simulator's "running"
    const client = new ScanClient({
      baseUrl: sim.url,
      credentials: async () => sim.apiKey,
      retry: { maxAttempts: 1 },
      statusVocabulary: { pending: ['queued'], running: [], succeeded: ['completed'], failed: ['failed'] },
    });
    sim.scriptScan('odd-words.example.com', { outcome: 'succeed', pollsToFinish: 50 });
    const logger = createMemoryLogger();
    const clock = manualClock();
    const deps = createScanDeps({
      s3: s3.client,
      scanClient: client,
      logger,
      clock,
      settings: createScanSettings({
        resultsBucket: RESULTS_BUCKET,
        poll: { minWaitSeconds: 5, maxWaitSeconds: 5, growthFactor: 1, deadlineSeconds: 15 },
      }),
    });
    let state = await startScan(deps, { domain: 'odd-words.example.com' });

    // Act
    const states: string[] = [];
    while (!state.poll.deadlineExceeded) {
      state = await pollScanStatus(deps, state);
      states.push(String(state.status?.state));
    }
    await client.close();

    // Assess
    expect(states).toEqual(['pending', 'unknown', 'unknown']);
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.message)).toContain(
      'Scan status word not in the vocabulary; treating it as running',
    );
  });

  it('leaves no object and no manifest when the report download is reset part-way, and rethrows VendorNetworkError', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    const started = await startScan(bed.deps, { domain: 'reset.example.com' });
    const finished = await pollUntilDone(bed, started);
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/report/',
      fault: { type: 'reset-mid-body', afterBytes: 10_000 },
    });

    // Act
    const error = await fetchScanOutput(bed.deps, { ...finished, output: 'report' }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(VendorNetworkError);
    expect((error as Error).name).toBe('VendorNetworkError');
    expect(await listKeys(s3.client, RESULTS_BUCKET, started.outputPrefix)).toEqual([]);
  });

  it('leaves no object when the vendor closes the connection before the announced length', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    const started = await startScan(bed.deps, { domain: 'truncated.example.com' });
    const finished = await pollUntilDone(bed, started);
    sim.addFault({ api: 'scan', path: '/debug/', fault: { type: 'truncate', afterBytes: 5_000 } });

    // Act
    const attempt = fetchScanOutput(bed.deps, { ...finished, output: 'debug' });

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'VendorNetworkError' });
    expect(await objectExists(s3.client, RESULTS_BUCKET, `${started.outputPrefix}debug.ndjson`)).toBe(false);
  });

  it('refuses to write a manifest unless all three outputs are stored', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    const started = await startScan(bed.deps, { domain: 'partial.example.com' });
    const finished = await pollUntilDone(bed, started);
    const report = await fetchScanOutput(bed.deps, { ...finished, output: 'report' });

    // Act
    const attempt = writeScanManifest(bed.deps, { ...finished, stored: [report] });

    // Assess
    await expect(attempt).rejects.toThrow(InvalidInputError);
    await expect(attempt).rejects.toMatchObject({ input: 'stored', reason: 'lacks the logs, debug outputs' });
    expect(await objectExists(s3.client, RESULTS_BUCKET, `${started.outputPrefix}manifest.json`)).toBe(false);
  });
});

describe('start', () => {
  it('rejects an invalid domain with InvalidInputError before calling the vendor', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    const before = sim.requestCount('POST /scan');

    // Act
    const attempt = startScan(bed.deps, { domain: 'not a domain!' });

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'InvalidInputError', input: 'domain' });
    expect(sim.requestCount('POST /scan')).toBe(before);
  });

  it('surfaces a vendor 429 on start as VendorThrottledError, which StartScan may retry', async () => {
    // Prepare
    bed = createTestDeps(s3.client, sim);
    sim.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      fault: { type: 'status', status: 429, retryAfter: 1 },
    });

    // Act
    const attempt = startScan(bed.deps, { domain: 'busy.example.com' });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(VendorThrottledError);
  });
});

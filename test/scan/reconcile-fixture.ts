/**
 * The reconciliation tests' shared setup: s3rver and the synthesized ScanDomain machine for the
 * file, a fresh vendor per test (its list is what reconciliation works from), a bucket per test,
 * and the ways those tests make orphans. `s3`, `sim` and `machine` are live bindings, set by the
 * hooks `useReconcileBed()` registers.
 */
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import { createScanDeps } from '#lambdas/scan/deps';
import type { ScanReconcileDeps } from '#lambdas/scan/reconcile-deps';
import type { ScanReconciliationRecord } from '#lambdas/scan/reconcile-scans';
import { type ReconcileSettingsInput, reconcileSettingsSchema } from '#lambdas/scan/reconcile-settings';
import { createScanSettings } from '#lambdas/scan/settings';
import type { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import type { VendorSimulator } from '#local/simulator/types';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { readJson } from '../kit/s3.ts';
import { startSimulator } from '../kit/simulator.ts';
import { executeScan, executionEnd, synthesizedScanMachine } from '../local/harness.ts';
import { closeTestClients, RESULTS_BUCKET, scanClientFor } from './fixture.ts';

export let s3: S3rverFixture;
export let sim: VendorSimulator;
export let machine: Awaited<ReturnType<typeof synthesizedScanMachine>>;

/** A client of this test's vendor; closed after each test. */
export const scanClient = (): ScanClient => scanClientFor(sim);

/** A bucket of its own per test, so listings and records never mix. */
export async function freshBucket(): Promise<string> {
  const bucket = `reconcile-${randomUUID().slice(0, 8)}`;
  await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

export function reconcileDeps(bucket: string, settings: Partial<ReconcileSettingsInput> = {}) {
  const client = scanClient();
  const logger = createMemoryLogger();
  const metrics = createMetricsRecorder();
  const s3Client = s3.createClient();
  const deps: ScanReconcileDeps = {
    ...createScanDeps({
      s3: s3Client,
      scanClient: client,
      logger,
      metrics,
      settings: createScanSettings({ resultsBucket: bucket }),
    }),
    inventory: client,
    // The orphans here are seconds old: no workflow is left to race with.
    reconcile: reconcileSettingsSchema.parse({ minAgeSeconds: 0, ...settings }),
  };
  return { deps, logger, metrics, s3: s3Client };
}

/**
 * Runs a domain through the synthesized ScanDomain with StartScan's answer lost at the vendor and
 * the listing unreadable while StartScan settles it: ScanRejected, with an orphan at the vendor.
 */
export async function scanWithLostStartAnswer(bucket: string, domain: string) {
  sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'lose-response' } });
  const blind = blindListing();
  const run = await executeScan(
    {
      ...machine,
      s3: s3.createClient(),
      resultsBucket: bucket,
      scanClient: scanClient(),
      poll: { minWaitSeconds: 1, maxWaitSeconds: 2, growthFactor: 1.5, deadlineSeconds: 600 },
      logger: createMemoryLogger(),
      clock: () => new Date(),
    },
    domain,
  );
  blind();
  return executionEnd(run.events);
}

/** GET /scans answers 503 until the returned function is called: a start cannot be settled. */
export function blindListing(): () => void {
  return sim.addFault({
    api: 'scan',
    method: 'GET',
    path: '/scans',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'status', status: 503 },
  });
}

/** Polls the scan at the vendor until it is finished: the vendor ran it while nobody watched. */
export async function letVendorFinish(): Promise<void> {
  const client = scanClient();
  const { raw } = await client.listScans();
  for (const scan of (raw as { scans: { uuid: string }[] }).scans) {
    for (let i = 0; i < 5; i++) {
      const status = await client.getStatus(scan.uuid);
      if (status.state === 'succeeded' || status.state === 'failed') break;
    }
  }
}

/** Scans started straight at the vendor (as in its console), at the simulator's clock. */
export async function startAtVendor(domain: string): Promise<string> {
  return (await scanClient().startScan(domain)).uuid;
}

export async function finishAtVendor(uuid: string, polls = 30): Promise<void> {
  const client = scanClient();
  for (let i = 0; i < polls; i++) {
    const status = await client.getStatus(uuid);
    if (status.state === 'succeeded' || status.state === 'failed') return;
  }
}

export async function readRecord(
  s3Client: ReturnType<S3rverFixture['createClient']>,
  bucket: string,
  key: string,
) {
  return readJson<ScanReconciliationRecord>(s3Client, bucket, key);
}

/** Replaces this test's vendor, e.g. with one whose clock the test moves. */
export async function restartSimulator(options: Parameters<typeof startSimulator>[0]): Promise<void> {
  await sim.close();
  sim = await startSimulator(options);
}

/** Registers this fixture's hooks in the calling test file. */
export function useReconcileBed(): void {
  beforeAll(async () => {
    s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
    machine = await synthesizedScanMachine();
  });

  beforeEach(async () => {
    // A fresh vendor per test: its list is what reconciliation works from.
    sim = await startSimulator({ pollsToFinish: 2 });
  });

  afterEach(async () => {
    await closeTestClients();
    await sim.close();
  });

  afterAll(async () => {
    await s3.close();
  });
}

/**
 * The vendor statistics job's tests' shared setup: s3rver for the file, a fresh simulator per test
 * (whose key could pass for a statistic's name), a bucket per test, and one run's deps.
 * `s3` and `sim` are live bindings, set by the hooks `useStatsBed()` registers.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { VendorStatsDeps } from '#lambdas/operations/vendor-stats';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import { SCAN_METRIC } from '#lambdas/registry';
import type { VendorSimulator } from '#local/simulator/types';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { startSimulator } from '../kit/simulator.ts';
import { closeTestClients, scanClientFor } from '../scan/fixture.ts';

/** A key that could pass for a statistic's name: a vendor echoing it as a field must not publish it. */
export const API_KEY = 'opsStatsKey_7f3a9c21d4e8b6f0';

export let s3: S3rverFixture;
export let sim: VendorSimulator;
let buckets = 0;

export async function freshBucket(): Promise<string> {
  buckets += 1;
  const bucket = `vendor-stats-${buckets}`;
  await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

export function statsRun(
  bucket: string,
  at = '2026-11-28T06:00:00.000Z',
  statsFields: VendorStatsDeps['settings']['statsFields'] = {},
) {
  const logger = createMemoryLogger();
  const metrics = createMetricsRecorder();
  const deps: VendorStatsDeps = {
    s3: s3.createClient(),
    settings: { resultsBucket: bucket, statusVocabulary: undefined, statsFields },
    metrics,
    logger,
    clock: () => new Date(at),
    stats: scanClientFor(sim),
  };
  return { deps, logger, metrics };
}

export async function finishedAtVendor(domain: string): Promise<void> {
  const client = scanClientFor(sim);
  const { uuid } = await client.startScan(domain);
  for (let poll = 0; poll < 5; poll++) {
    const status = await client.getStatus(uuid);
    if (status.state === 'succeeded' || status.state === 'failed') return;
  }
}

export function answerStats(body: string): void {
  sim.addFault({ api: 'scan', method: 'GET', path: '/stats', fault: { type: 'status', status: 200, body } });
}

export const statistics = (recorded: ReturnType<typeof createMetricsRecorder>['recorded']) =>
  Object.fromEntries(
    recorded
      .filter((m) => m.name === SCAN_METRIC.vendorStatistic)
      .map((m) => [m.dimensions.statistic, m.value]),
  );
export const increases = (recorded: ReturnType<typeof createMetricsRecorder>['recorded']) =>
  recorded
    .filter(
      (m) => m.name === SCAN_METRIC.vendorFinishedIncrease || m.name === SCAN_METRIC.vendorFailedIncrease,
    )
    .map((m) => [m.name, m.value, m.dimensions]);

/** Registers this fixture's hooks in the calling test file. */
export function useStatsBed(): void {
  beforeAll(async () => {
    s3 = await startS3rver({ buckets: [] });
  });
  beforeEach(async () => {
    sim = await startSimulator({ apiKey: API_KEY, pollsToFinish: 1 });
  });
  afterEach(async () => {
    await closeTestClients();
    await sim.close();
  });
  afterAll(async () => {
    await s3.close();
  });
}

/**
 * The early-end watcher's core against the vendor simulator over loopback and the embedded S3,
 * with the local task-token stand-in as Step Functions: it releases exactly the waits of scans
 * that ended (finished or failed), never a running one, removes stale records, and neither a
 * vendor 429 nor a token Step Functions rejects fails anything.
 */
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  EARLY_END_CONCURRENCY,
  EARLY_END_SCHEDULE,
  type EarlyEndWatchDeps,
  type PassReport,
  watchEarlyEndsOnce,
} from '#lambdas/scan/early-end-watch';
import { parseWaitingKey, WAITING_PREFIX, waitingRecordKey } from '#lambdas/scan/waiting-records';
import type { VendorClients } from '#lambdas/vendor-api/clients';
import { LocalTaskTokens } from '../../local/runner/early-end-watch.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import { createMemoryLogger, type MemoryLogger } from '../kit/loggers.ts';
import { listKeys } from '../kit/s3.ts';
import { vendorClientsFor } from '../local/harness.ts';

const BUCKET = 'watch-results';
const NOW = new Date('2026-11-20T12:00:00.000Z');
/** Two minutes before NOW: with no check yet, every scan is due. */
const STARTED = new Date(NOW.getTime() - 120_000).toISOString();

let s3: S3rverFixture;
let sim: VendorSimulator;
let clients: VendorClients;
let logger: MemoryLogger;
let tokens: LocalTaskTokens;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [BUCKET] });
});
afterAll(async () => {
  await s3.close();
});
beforeEach(async () => {
  sim = await startVendorSimulator({ pollsToFinish: 0, failingDomains: ['broken.example.com'] });
  clients = vendorClientsFor(sim, { maxAttempts: 1 });
  logger = createMemoryLogger();
  tokens = new LocalTaskTokens();
  for (const Key of await listKeys(s3.client, BUCKET)) {
    await s3.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key }));
  }
});
afterEach(async () => {
  await clients.close();
  await sim.close();
});

function deps(overrides: Partial<EarlyEndWatchDeps> = {}): EarlyEndWatchDeps {
  return {
    s3: s3.client,
    bucket: BUCKET,
    scanClient: clients.scan,
    sfn: tokens.client,
    logger,
    clock: () => NOW,
    sleep: async () => {},
    schedule: EARLY_END_SCHEDULE,
    concurrency: EARLY_END_CONCURRENCY,
    timeBudgetMs: 60_000,
    passes: 1,
    ...overrides,
  };
}

/** A scan at the simulator waiting in WaitForScan: its record written, its token awaited. */
async function waitingScan(domain: string, token = LocalTaskTokens.newToken(), attempt = 1) {
  const { uuid: scanUuid } = await clients.scan.startScan(domain);
  const key = waitingRecordKey(scanUuid, STARTED, attempt, 3600);
  await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: token }));
  let outcome: { output: unknown } | undefined | 'pending' = 'pending';
  const waited = tokens.waitOn(token, 300).then((result) => {
    outcome = result;
  });
  return { scanUuid, key, token, waited, outcome: () => outcome };
}

async function pass(overrides: Partial<EarlyEndWatchDeps> = {}): Promise<PassReport> {
  return watchEarlyEndsOnce(deps(overrides), NOW.getTime() + 60_000);
}

async function waitingKeys(): Promise<string[]> {
  return listKeys(s3.client, BUCKET, WAITING_PREFIX);
}

describe('the early-end watcher', () => {
  it('releases exactly the scans that ended, finished or failed, never a running one', async () => {
    // Prepare
    sim.scriptScan('slow.example.com', { outcome: 'never-finish' });
    const finished = await waitingScan('done.example.com');
    const failed = await waitingScan('broken.example.com');
    const running = await waitingScan('slow.example.com');

    // Act
    const report = await pass();
    await Promise.all([finished.waited, failed.waited]);

    // Assess
    expect(report).toMatchObject({ waiting: 3, checked: 3, released: 2, staleRemoved: 0, throttled: false });
    expect(finished.outcome()).toEqual({ output: { ageSeconds: 120 } });
    expect(failed.outcome()).toEqual({ output: { ageSeconds: 120 } });
    expect(running.outcome()).toBe('pending');
    // The running scan keeps its record and gains the watcher's check marker; the others are gone.
    const keys = await waitingKeys();
    expect(keys.map((key) => parseWaitingKey(key))).toEqual([
      expect.objectContaining({ kind: 'checked', scanUuid: running.scanUuid, ageSeconds: 120 }),
      expect.objectContaining({ kind: 'wait', scanUuid: running.scanUuid }),
    ]);
    await running.waited;
    expect(running.outcome()).toBeUndefined();
  });

  it('checks a running scan again only when the promised gap would otherwise run out', async () => {
    // Prepare
    sim.scriptScan('slow.example.com', { outcome: 'never-finish' });
    await waitingScan('slow.example.com');
    await pass();
    const statusCalls = () => sim.requestCount('GET /status/{uuid}');
    const before = statusCalls();

    // Act: 25 s later the next pass (30 s on) still lands within 60 s of the check; 31 s later not.
    const soon = await pass({ clock: () => new Date(NOW.getTime() + 25_000) });
    const later = await pass({ clock: () => new Date(NOW.getTime() + 31_000) });

    // Assess
    expect(soon.checked).toBe(0);
    expect(later.checked).toBe(1);
    expect(statusCalls()).toBe(before + 1);
    // One marker, the latest.
    const markers = (await waitingKeys()).filter((key) => parseWaitingKey(key)?.kind === 'checked');
    expect(markers.map((key) => parseWaitingKey(key))).toEqual([
      expect.objectContaining({ ageSeconds: 151 }),
    ]);
  });

  it('removes the record of a wait that ended by itself (TaskTimedOut) and of a token Step Functions rejects', async () => {
    // Prepare: nobody waits on the first token any more; the second is not a token at all.
    const { uuid: gone } = await clients.scan.startScan('gone.example.com');
    const goneKey = waitingRecordKey(gone, STARTED, 4, 300);
    await s3.client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: goneKey, Body: LocalTaskTokens.newToken() }),
    );
    const { uuid: forged } = await clients.scan.startScan('forged.example.com');
    const forgedKey = waitingRecordKey(forged, STARTED, 2, 300);
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: forgedKey, Body: 'not-a-token' }));

    // Act
    const report = await pass();

    // Assess
    expect(report).toMatchObject({ checked: 2, released: 0, staleRemoved: 2 });
    expect(await waitingKeys()).toEqual([]);
    // The token never reaches a log line.
    expect(logger.text()).not.toContain('local-task-');
  });

  it('keeps only the newest wait of a scan: older records are left over from earlier polls', async () => {
    // Prepare
    sim.scriptScan('slow.example.com', { outcome: 'never-finish' });
    const { uuid: scanUuid } = await clients.scan.startScan('slow.example.com');
    for (const attempt of [1, 2, 3]) {
      const key = waitingRecordKey(scanUuid, STARTED, attempt, 60);
      await s3.client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: LocalTaskTokens.newToken() }),
      );
    }

    // Act
    await pass();

    // Assess
    const waits = (await waitingKeys()).map((key) => parseWaitingKey(key)).filter((k) => k?.kind === 'wait');
    expect(waits).toEqual([expect.objectContaining({ attempt: 3 })]);
  });

  it('survives a vendor 429: no release, no failure, the scans wait for the next pass', async () => {
    // Prepare
    const finished = await waitingScan('done.example.com');
    sim.addFault({ api: 'scan', path: /^\/status\//, times: 10, fault: { type: 'status', status: 429 } });

    // Act
    const throttled = await pass({ concurrency: 1 });
    sim.clearFaults();
    const next = await pass({ clock: () => new Date(NOW.getTime() + 1000) });
    await finished.waited;

    // Assess
    expect(throttled).toMatchObject({ checked: 0, released: 0, throttled: true });
    expect(next).toMatchObject({ checked: 1, released: 1, throttled: false });
    expect(finished.outcome()).toEqual({ output: { ageSeconds: 121 } });
  });

  it('starts no check past its time budget', async () => {
    // Prepare
    await waitingScan('done.example.com');

    // Act
    const report = await watchEarlyEndsOnce(deps(), NOW.getTime());

    // Assess
    expect(report).toMatchObject({ waiting: 1, checked: 0 });
  });
});

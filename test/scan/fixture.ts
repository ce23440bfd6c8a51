/**
 * Wiring for the scan workflow tests: the vendor simulator and s3rver on loopback, a real ScanClient,
 * and ScanDeps built the way the local runner builds them (createScanDeps + createScanSettings).
 */
import type { Readable } from 'node:stream';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ScanInProgress } from '#lambdas/scan/contracts';
import type { ScanDeps } from '#lambdas/scan/deps';
import { createScanDeps } from '#lambdas/scan/deps';
import { pollScanStatus } from '#lambdas/scan/poll-scan-status';
import { createScanSettings, type ScanSettingsInput } from '#lambdas/scan/settings';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import type { VendorSimulator } from '#local/simulator/types';
import { digestStream } from '../kit/digest.ts';
import { createMemoryLogger, type MemoryLogger } from '../kit/loggers.ts';

export const RESULTS_BUCKET = 'scan-results';

/** A clock the test moves by hand. */
export function manualClock(start = new Date('2026-11-20T10:00:00.000Z')): (() => Date) & {
  advance(seconds: number): void;
} {
  let now = start.getTime();
  return Object.assign(() => new Date(now), {
    advance(seconds: number) {
      now += seconds * 1000;
    },
  });
}

const openClients = new Set<ScanClient>();

/** Closes every ScanClient the fixture created (call in afterEach/afterAll). */
export async function closeTestClients(): Promise<void> {
  const clients = [...openClients];
  openClients.clear();
  await Promise.all(clients.map((client) => client.close()));
}

export function scanClientFor(sim: VendorSimulator): ScanClient {
  const client = new ScanClient({
    baseUrl: sim.url,
    credentials: async () => sim.apiKey,
    // Vendor retries have their own tests; here a fault must surface at once.
    retry: { maxAttempts: 1 },
    sleep: async () => {},
    idleTimeoutMs: 5_000,
  });
  openClients.add(client);
  return client;
}

export interface ScanTestBed {
  readonly deps: ScanDeps;
  readonly logger: MemoryLogger;
  readonly clock: ReturnType<typeof manualClock>;
  readonly client: ScanClient;
}

export function createTestDeps(
  s3: S3Client,
  sim: VendorSimulator,
  settings: Partial<ScanSettingsInput> = {},
): ScanTestBed {
  const logger = createMemoryLogger();
  const clock = manualClock();
  const client = scanClientFor(sim);
  const deps = createScanDeps({
    s3,
    scanClient: client,
    logger,
    clock,
    settings: createScanSettings({ resultsBucket: RESULTS_BUCKET, ...settings }),
  });
  return { deps, logger, clock, client };
}

/**
 * Drives the poll loop the way the state machine does (WaitForScan is simulated by moving the clock
 * by the scheduled wait) until the Choice state would leave it.
 */
export async function pollUntilDone(
  bed: ScanTestBed,
  state: ScanInProgress,
  maxPolls = 100,
): Promise<ScanInProgress> {
  let current = state;
  for (let i = 0; i < maxPolls; i++) {
    bed.clock.advance(current.poll.nextWaitSeconds);
    current = await pollScanStatus(bed.deps, current);
    const finished = current.status?.state === 'succeeded' || current.status?.state === 'failed';
    if (finished || current.poll.deadlineExceeded) return current;
  }
  throw new Error(`the scan did not leave the poll loop within ${maxPolls} polls`);
}

/** What the simulator serves for an output, fetched directly (not through the code under test). */
export async function vendorOutputDigest(
  sim: VendorSimulator,
  output: string,
  scanUuid: string,
): Promise<{ sha256: string; size: number; contentType: string | null }> {
  // fetch() decodes a gzip Content-Encoding transparently, like the vendor client.
  const res = await fetch(`${sim.url}/${output}/${scanUuid}`, {
    headers: { authorization: `Bearer ${sim.apiKey}` },
  });
  if (!res.ok || !res.body) throw new Error(`direct download of ${output} failed: HTTP ${res.status}`);
  const digest = await digestStream(res.body as unknown as AsyncIterable<Uint8Array>);
  return { ...digest, contentType: res.headers.get('content-type') };
}

export async function s3ObjectDigest(
  s3: S3Client,
  key: string,
): Promise<{
  sha256: string;
  size: number;
  contentType: string | undefined;
  metadata: Record<string, string>;
}> {
  const object = await s3.send(new GetObjectCommand({ Bucket: RESULTS_BUCKET, Key: key }));
  const digest = await digestStream(object.Body as Readable);
  return { ...digest, contentType: object.ContentType, metadata: object.Metadata ?? {} };
}

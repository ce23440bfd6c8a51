/**
 * Wiring for the breach tests: the vendor simulator and s3rver on loopback, a real BreachClient,
 * and BreachDeps built as the local runner builds them. Everything any test stores or logs can be
 * searched for the test's addresses (`everythingStored`, the memory logger).
 */
import type { Readable } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type BreachReportInput, personRef } from '#lambdas/breach/contracts';
import type { BreachDeps } from '#lambdas/breach/deps';
import { createBreachSettings } from '#lambdas/breach/deps';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import { BreachClient } from '#lambdas/platform/vendor-api/breach-client';
import type { VendorAttemptObserver } from '#lambdas/platform/vendor-api/types';
import { type S3rverFixture, startS3rver } from '#local/embedded-s3';
import { startVendorSimulator } from '#local/simulator/index';
import type { SimulatorOptions, VendorSimulator } from '#local/simulator/types';
import { createMemoryLogger, type MemoryLogger } from '../helpers/memory-logger.ts';

export const RESULTS_BUCKET = 'breach-results';
export const IDENTITY_KEY = 'test-identity-key-0123456789abcdef-0123456789';

export interface BreachTestBed {
  readonly sim: VendorSimulator;
  readonly s3: S3rverFixture;
  readonly deps: BreachDeps;
  readonly logger: MemoryLogger;
  readonly metrics: ReturnType<typeof createMetricsRecorder>;
  readonly client: BreachClient;
  close(): Promise<void>;
}

export interface BreachBedOptions {
  /** Vendor attempts per call. @default 1 (a fault surfaces at once) */
  readonly maxAttempts?: number;
  readonly observer?: VendorAttemptObserver;
  readonly maxEmails?: number;
  /** Buckets besides the results bucket. */
  readonly buckets?: readonly string[];
  readonly simulator?: SimulatorOptions;
}

export async function startBreachBed(options: BreachBedOptions = {}): Promise<BreachTestBed> {
  const sim = await startVendorSimulator(options.simulator);
  const s3 = await startS3rver({ buckets: [RESULTS_BUCKET, ...(options.buckets ?? [])] });
  const logger = createMemoryLogger();
  const metrics = createMetricsRecorder();
  const client = new BreachClient({
    baseUrl: sim.url,
    credentials: async () => sim.apiKey,
    retry: { maxAttempts: options.maxAttempts ?? 1, baseDelayMs: 1, maxDelayMs: 5 },
    sleep: async () => {},
    idleTimeoutMs: 5_000,
    logger,
    ...(options.observer ? { observer: options.observer } : {}),
  });
  const deps: BreachDeps = {
    s3: s3.client,
    breachClient: client,
    logger,
    metrics,
    settings: createBreachSettings({
      resultsBucket: RESULTS_BUCKET,
      ...(options.maxEmails ? { maxEmails: options.maxEmails } : {}),
    }),
    clock: () => new Date(),
  };
  return {
    sim,
    s3,
    deps,
    logger,
    metrics,
    client,
    async close() {
      await client.close();
      await Promise.all([sim.close(), s3.close()]);
    },
  };
}

/** Stores `{ name, emails }` as a starter would and returns the execution input that names it. */
export async function storeRequest(
  s3: S3Client,
  request: { name: string; emails: string[] },
  requestId = 'req-1',
): Promise<BreachReportInput> {
  const person = personRef(IDENTITY_KEY, request);
  const key = `breach/requests/${person.id.slice(0, 16)}-${requestId}.json`;
  await s3.send(
    new PutObjectCommand({
      Bucket: RESULTS_BUCKET,
      Key: key,
      Body: JSON.stringify(request),
      ContentType: 'application/json',
    }),
  );
  return { requestId, person, request: { bucket: RESULTS_BUCKET, key } };
}

/** Every key in the results bucket. */
export async function keysUnder(s3: S3Client, prefix = ''): Promise<string[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: RESULTS_BUCKET, Prefix: prefix }));
  return (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
}

export async function readObject(s3: S3Client, key: string): Promise<Buffer> {
  const object = await s3.send(new GetObjectCommand({ Bucket: RESULTS_BUCKET, Key: key }));
  const chunks: Buffer[] = [];
  for await (const chunk of object.Body as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function readJson<T = Record<string, unknown>>(s3: S3Client, key: string): Promise<T> {
  return JSON.parse((await readObject(s3, key)).toString('utf8')) as T;
}

/**
 * Every key and every stored body except the request objects (which hold the addresses by
 * design), and every log line: where an address must never appear.
 */
export async function everythingStored(bed: BreachTestBed): Promise<string> {
  const parts: string[] = [bed.logger.text(), JSON.stringify(bed.metrics.recorded)];
  for (const key of await keysUnder(bed.s3.client)) {
    parts.push(key);
    if (key.startsWith('breach/requests/') || key.endsWith('.zip')) continue;
    parts.push((await readObject(bed.s3.client, key)).toString('utf8'));
  }
  return parts.join('\n');
}

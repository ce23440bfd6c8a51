/**
 * Wiring for the breach tests: the vendor simulator and s3rver on loopback, a real BreachClient,
 * and BreachDeps built as the local runner builds them. Everything any test stores or logs can be
 * searched for the test's addresses (`everythingStored`, the memory logger).
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { type BreachReportInput, personRef } from '#lambdas/breach/contracts';
import type { BreachDeps } from '#lambdas/breach/deps';
import { createBreachSettings } from '#lambdas/breach/deps';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import type { VendorAttemptObserver } from '#lambdas/vendor-api/transport/types';
import { type LocalBreachOptions, localReportNamingKey } from '#local/runner/breach-run';
import { type S3rverFixture, startS3rver } from '#local/services/s3/embedded-s3';
import { startVendorSimulator } from '#local/simulator/index';
import type { SimulatorOptions, VendorSimulator } from '#local/simulator/types';
import { type AslDefinition, breachReportStateMachine } from '#local/synth/definitions';
import { cachedTemplate } from '#local/synth/synth-cache';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import { createMemoryLogger, type MemoryLogger } from '../kit/loggers.ts';
import { listKeys, readObject } from '../kit/s3.ts';

export const RESULTS_BUCKET = 'breach-results';
export const IDENTITY_KEY = 'test-identity-key-0123456789abcdef-0123456789';
/** The report naming key a local run derives from IDENTITY_KEY: direct step calls and runs agree. */
export const REPORT_NAMING_KEY = localReportNamingKey(IDENTITY_KEY);

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
    // As the local runner does for a simulator it started: its pre-signed downloads are on loopback.
    allowedOrigins: [sim.storageUrl],
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
    reportNamingKey: async () => REPORT_NAMING_KEY,
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

/**
 * Every key and every stored body except the request objects (which hold the addresses by
 * design), and every log line: where an address must never appear.
 */
export async function everythingStored(bed: BreachTestBed): Promise<string> {
  const parts: string[] = [bed.logger.text(), JSON.stringify(bed.metrics.recorded)];
  for (const key of await listKeys(bed.s3.client, RESULTS_BUCKET)) {
    parts.push(key);
    if (key.startsWith('breach/requests/') || key.endsWith('.zip')) continue;
    parts.push((await readObject(bed.s3.client, RESULTS_BUCKET, key)).toString('utf8'));
  }
  return parts.join('\n');
}

/** The synthesized BreachReport definition, and the bed of the running test: set by useBreachRun. */
export let definition: AslDefinition;
export let bed: BreachTestBed;

/**
 * Registers the hooks of a file that runs the synthesized BreachReport locally: the definition once
 * (the synth is cached per process), a fresh bed per test.
 */
export function useBreachRun(bedOptions: BreachBedOptions = {}): void {
  beforeAll(async () => {
    definition = breachReportStateMachine(await cachedTemplate(DEFAULT_PIPELINE_CONFIG)).definition;
  }, 180_000);
  beforeEach(async () => {
    bed = await startBreachBed(bedOptions);
  });
  afterEach(async () => {
    await bed.close();
  });
}

/** What the local runner passes for the current bed, with quick retries. */
export function runOptions(overrides: Partial<LocalBreachOptions> = {}): LocalBreachOptions {
  return {
    s3: bed.s3.client,
    resultsBucket: RESULTS_BUCKET,
    definition,
    breachClient: bed.client,
    maxEmails: 50,
    identityKey: IDENTITY_KEY,
    logger: bed.logger,
    metrics: bed.metrics,
    retryIntervalMs: 1,
    ...overrides,
  };
}

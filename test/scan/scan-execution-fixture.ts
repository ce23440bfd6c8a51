/**
 * The ScanDomain execution tests' shared setup: the synthesized definition and its engine, s3rver,
 * a fresh simulator and vendor clients per test, a frozen clock and quick poll settings, and ways
 * to make one step fail. `definition`, `machine`, `s3`, `sim`, `clients` and `logger` are live
 * bindings, set by the hooks `useScanExecution()` registers.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { StateMachine } from 'aws-local-stepfunctions';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import type { PipelineMetrics } from '#lambdas/platform/metrics';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import type { PollSettings } from '#lambdas/scan/poll-schedule';
import type { VendorClients } from '#lambdas/vendor-api/clients';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { startVendorSimulator } from '../../local/simulator/index.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import type { AslDefinition } from '../../local/synth/definitions.ts';
import { createMemoryLogger, type MemoryLogger } from '../kit/loggers.ts';
import { listKeys } from '../kit/s3.ts';
import {
  executeScan,
  executionEnd,
  type Handler,
  type LocalRun,
  type ScanExecutionSetup,
  synthesizedScanMachine,
  vendorClientsFor,
} from '../local/harness.ts';

export const RESULTS = 'scan-results';
/** Short waits and a short deadline; with waits overridden to 0 ms only the arithmetic remains. */
export const QUICK_POLL: PollSettings = {
  minWaitSeconds: 1,
  maxWaitSeconds: 2,
  growthFactor: 1.5,
  deadlineSeconds: 60,
};
/** A frozen clock: the deadline then depends on the scheduled waits alone, as in the worst case. */
export const NOW = new Date('2026-11-20T10:00:00.000Z');
export const clock = () => NOW;

export let definition: AslDefinition;
export let machine: StateMachine;
export let s3: S3rverFixture;
export let sim: VendorSimulator;
export let clients: VendorClients;
export let logger: MemoryLogger;

/** Runs one domain through the synthesized definition with this file's simulator, s3rver and clock. */
export function execute(
  domain: string,
  options: {
    poll?: PollSettings;
    clients?: VendorClients;
    /** The S3 client the handlers use (e.g. one that refuses some writes). */
    s3Client?: S3Client;
    wrap?: ScanExecutionSetup['wrap'];
    maxOutputBytes?: number;
    lambdaTimeoutMs?: number;
    /** Every wait, WaitForScan's heartbeat timeout included (ms). @default 0 */
    waitOverrideMs?: number;
    /** The task tokens WaitForScan waits on (a test's watcher releases them). @default a fresh set */
    tokens?: ScanExecutionSetup['tokens'];
    /** Where the handlers record metrics. @default none kept */
    metrics?: PipelineMetrics;
  } = {},
): Promise<LocalRun> {
  return executeScan(
    {
      definition,
      machine,
      s3: options.s3Client ?? s3.client,
      resultsBucket: RESULTS,
      scanClient: (options.clients ?? clients).scan,
      poll: options.poll ?? QUICK_POLL,
      logger,
      clock,
      ...(options.wrap ? { wrap: options.wrap } : {}),
      ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }),
      ...(options.lambdaTimeoutMs === undefined ? {} : { lambdaTimeoutMs: options.lambdaTimeoutMs }),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.waitOverrideMs === undefined ? {} : { waitOverrideMs: options.waitOverrideMs }),
      ...(options.tokens ? { tokens: options.tokens } : {}),
    },
    domain,
  );
}

/** The Fail state's Cause, which RecordFailure made a JSON ScanOutcome. */
export function failedOutcome(run: LocalRun, error: string): ScanOutcome {
  const end = executionEnd(run.events);
  expect(end).toMatchObject({ status: 'failed', error });
  return JSON.parse(end.cause ?? '') as ScanOutcome;
}

/** A bound handler that first fails the way the Lambda service (not our code) fails. */
export function failingFirst(handler: Handler | undefined, errorName: string, times = 1): Handler {
  if (!handler) throw new Error('handler is not bound');
  let failures = 0;
  return async (input) => {
    if (failures < times) {
      failures += 1;
      const error = new Error(`${errorName} (injected by the test)`);
      error.name = errorName;
      throw error;
    }
    return handler(input);
  };
}

/** A client for the same s3rver that refuses PutObject for matching keys, as S3 would with AccessDenied. */
export function refusingPuts(keys: RegExp): S3Client {
  const client = s3.createClient();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: unknown }).Key;
      if (context.commandName === 'PutObjectCommand' && typeof key === 'string' && keys.test(key)) {
        const error = new Error(`Access Denied (injected by the test for ${key})`);
        error.name = 'AccessDenied';
        throw error;
      }
      return next(args);
    },
    { step: 'initialize', name: 'refusePuts' },
  );
  return client;
}

export function loop(polls: number): string[] {
  return Array.from({ length: polls }, () => ['WaitForScan', 'PollScanStatus', 'ScanFinished?']).flat();
}

/** The failure.json of a scan that never got an output prefix (rejected before or at the vendor). */
export async function rejectedFailureRecords(domainFolder: string): Promise<string[]> {
  const keys = await listKeys(s3.client, RESULTS, `scans/${domainFolder}/`);
  return keys.filter((key) => /\/rejected-[0-9a-f]{16}\/failure\.json$/.test(key));
}

/**
 * Registers this fixture's hooks in the calling test file: the ScanDomain definition synthesized
 * for `config` (default: the default configuration), s3rver, and a simulator per test (its key
 * `apiKey`) whose scans finish after `pollsToFinish` polls (default 2) and fail for broken.example.com.
 */
export function useScanExecution(
  options: {
    config?: PipelineConfig;
    pollsToFinish?: number;
    /** The simulator's key. @default a random `sk_sim_…` */
    apiKey?: string;
  } = {},
): void {
  beforeAll(async () => {
    ({ definition, machine } = await synthesizedScanMachine(options.config));
    s3 = await startS3rver({ buckets: [RESULTS] });
  });

  beforeEach(async () => {
    sim = await startVendorSimulator({
      pollsToFinish: options.pollsToFinish ?? 2,
      failingDomains: ['broken.example.com'],
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
    });
    clients = vendorClientsFor(sim);
    logger = createMemoryLogger();
  });

  afterEach(async () => {
    await clients.close();
    await sim.close();
  });

  afterAll(async () => {
    await s3.close();
  });
}

/**
 * Shared wiring for the local-execution tier: the synthesized ScanDomain definition run by
 * aws-local-stepfunctions with every Task bound to its real handler, against the vendor simulator and
 * s3rver on loopback. Nothing here replaces product code; it only observes it.
 */
import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import type { StateMachine } from 'aws-local-stepfunctions';
import { expect } from 'vitest';
import type { PipelineMetrics, RecordedMetric } from '#lambdas/platform/metrics';
import type { PipelineLogger } from '#lambdas/platform/runtime/logger';
import type { ScanOutcome, ScanOutput } from '#lambdas/scan/contracts';
import type { ScanApi } from '#lambdas/scan/deps';
import type { PollSettings } from '#lambdas/scan/poll-schedule';
import { createVendorClients, type VendorClients } from '#lambdas/vendor-api/clients';
import type { VendorAttemptObserver } from '#lambdas/vendor-api/transport/types';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/defaults.ts';
import type { PipelineConfig } from '../../lib/config/schema.ts';
import type { LocalTaskTokens } from '../../local/runner/early-end-watch.ts';
import { bindScanHandlers, runScanExecution, type ScanExecutionResult } from '../../local/runner/pipeline.ts';
import { localStateMachine } from '../../local/runner/task-binding.ts';
import type { VendorSimulator } from '../../local/simulator/types.ts';
import { type AslDefinition, scanDomainStateMachine } from '../../local/synth/definitions.ts';
import { cachedTemplate } from '../../local/synth/synth-cache.ts';

export type Handlers = ReturnType<typeof bindScanHandlers>;
export type Handler = Handlers[string];

type Execution = ReturnType<StateMachine['run']>;
/** One entry of the engine's event log (the package does not export the type itself). */
export type EngineEvent = Execution['eventLogs'] extends AsyncGenerator<infer E> ? E : never;

/**
 * A machine whose executions copy every event of their log into `sink` as the consumer (the local
 * runner's `runScanExecution`) reads it, so a test sees the raw log of the product's own run.
 */
export function recordingMachine(machine: StateMachine, sink: EngineEvent[]): StateMachine {
  async function* tee(source: AsyncGenerator<EngineEvent>): AsyncGenerator<EngineEvent> {
    for await (const event of source) {
      sink.push(event);
      yield event;
    }
  }
  const recording: Pick<StateMachine, 'run'> = {
    run: (input, options) => {
      const execution = machine.run(input, options);
      return { ...execution, eventLogs: tee(execution.eventLogs) };
    },
  };
  return recording as StateMachine;
}

/** The ScanDomain definition `cdk synth` produces for `config`, and an engine that runs it. */
export async function synthesizedScanMachine(
  config: PipelineConfig = DEFAULT_PIPELINE_CONFIG,
): Promise<{ definition: AslDefinition; machine: StateMachine }> {
  const definition = scanDomainStateMachine(await cachedTemplate(config)).definition;
  return {
    definition,
    // Validated once per process, as the runner does (the files using this share a worker's graph).
    machine: localStateMachine(definition),
  };
}

/** Names of the states entered, in order (nested Parallel branch states included). */
export function enteredStates(events: readonly EngineEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'StateEntered' ? [event.state.name] : []));
}

/** Names of the states the engine retried, one entry per retry. */
export function retriedStates(events: readonly EngineEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'StateRetried' ? [event.state.name] : []));
}

export interface LocalRun extends ScanExecutionResult {
  /** The engine's raw event log of the execution. */
  readonly events: EngineEvent[];
  /** Top-level states entered, in order. */
  readonly path: string[];
}

export interface ScanExecutionSetup {
  readonly definition: AslDefinition;
  readonly machine: StateMachine;
  readonly s3: S3Client;
  readonly resultsBucket: string;
  readonly scanClient: ScanApi;
  readonly poll: PollSettings;
  readonly logger: PipelineLogger;
  readonly clock: () => Date;
  /** Replaces bound handlers, e.g. to make one throw a Lambda service error first. */
  readonly wrap?: (bound: Handlers) => Handlers;
  /** Where the handlers record metrics. @default NO_METRICS */
  readonly metrics?: PipelineMetrics;
  /** `scan.maxOutputBytes`. @default SCAN_OUTPUT_LIMIT.default */
  readonly maxOutputBytes?: number;
  /** The table the definition was synthesized with. @default SCAN_OUTPUTS */
  readonly outputs?: readonly ScanOutput[];
  /** Replaces every function's synthesized timeout (ms). @default the template's */
  readonly lambdaTimeoutMs?: number;
  /** Every wait (WaitForScan's heartbeat timeout included), in ms. @default 0 */
  readonly waitOverrideMs?: number;
  /** The task tokens WaitForScan waits on, for a test that releases them. @default a fresh set */
  readonly tokens?: LocalTaskTokens;
}

/**
 * Runs one domain through the synthesized definition the way the local runner does
 * (`bindScanHandlers` + `runScanExecution`), with waits and retry intervals at 0 ms.
 */
export async function executeScan(setup: ScanExecutionSetup, domain: string): Promise<LocalRun> {
  const { definition } = setup;
  const bound = bindScanHandlers(
    definition,
    {
      s3: setup.s3,
      resultsBucket: setup.resultsBucket,
      scanClient: setup.scanClient,
      poll: setup.poll,
      logger: setup.logger,
      // The callback wait's heartbeat timeout, as the run's waits (below).
      waitOverrideMs: setup.waitOverrideMs ?? 0,
      ...(setup.tokens ? { tokens: setup.tokens } : {}),
      ...(setup.metrics ? { metrics: setup.metrics } : {}),
      ...(setup.maxOutputBytes === undefined ? {} : { maxOutputBytes: setup.maxOutputBytes }),
      ...(setup.outputs === undefined ? {} : { outputs: setup.outputs }),
      ...(setup.lambdaTimeoutMs === undefined ? {} : { lambdaTimeoutMs: setup.lambdaTimeoutMs }),
    },
    setup.clock,
  );
  const handlers = setup.wrap ? setup.wrap(bound) : bound;
  const events: EngineEvent[] = [];
  const run = await runScanExecution(
    recordingMachine(setup.machine, events),
    definition,
    handlers,
    { domain, executionName: `local-test-${randomUUID()}`, runId: 'local-test-run' },
    { retryIntervalMs: 0, waitOverrideMs: setup.waitOverrideMs ?? 0 },
  );
  const topLevel = new Set(Object.keys(definition.States));
  return { ...run, events, path: enteredStates(events).filter((name) => topLevel.has(name)) };
}

export interface ExecutionEnd {
  readonly status: 'succeeded' | 'failed';
  /** ExecutionSucceeded's output. */
  readonly output?: ScanOutcome;
  /** ExecutionFailed's Error and Cause. */
  readonly error?: string;
  readonly cause?: string;
}

/** How the execution ended, read from the last event of its log. */
export function executionEnd(events: readonly EngineEvent[]): ExecutionEnd {
  for (const event of [...events].reverse()) {
    if (event.type === 'ExecutionSucceeded') {
      return { status: 'succeeded', output: event.output as unknown as ScanOutcome };
    }
    if (event.type === 'ExecutionFailed') {
      return { status: 'failed', error: event.Error, cause: String(event.Cause) };
    }
  }
  throw new Error('the event log has neither ExecutionSucceeded nor ExecutionFailed');
}

/**
 * Vendor clients for the simulator whose own retries are quick (no backoff sleeps) and few, so a fault
 * that outlasts them reaches the state machine's Retry.
 */
export function vendorClientsFor(
  sim: VendorSimulator,
  options: { maxAttempts?: number; requestTimeoutMs?: number; observer?: VendorAttemptObserver } = {},
): VendorClients {
  const credentials = async () => sim.apiKey;
  return createVendorClients({
    scanApiUrl: sim.url,
    keysApiUrl: sim.url,
    breachApiUrl: sim.url,
    // As the local runner passes it for a simulator it started.
    allowedOrigins: [sim.storageUrl],
    scanCredentials: credentials,
    keysCredentials: credentials,
    breachCredentials: credentials,
    orgUuid: sim.orgUuid,
    sleep: async () => {},
    retry: { maxAttempts: options.maxAttempts ?? 2 },
    requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
    idleTimeoutMs: 5_000,
    ...(options.observer ? { observer: options.observer } : {}),
  });
}

/** No dimension value may be a domain, a scan id, an email or anything else open-ended. */
export function expectClosedDimensions(metrics: readonly RecordedMetric[]): void {
  const allowed: Record<string, RegExp> = {
    workflow: /^(scan|list|breach|rotation)$/,
    operation: /^(scan|keys|breach)\.[a-zA-Z]+$/,
    outcome: /^[A-Za-z_]+$/,
    output: /^(report|logs|debug)$/,
  };
  for (const metric of metrics) {
    for (const [key, value] of Object.entries(metric.dimensions)) {
      expect(allowed[key], `dimension ${key}`).toBeDefined();
      expect(String(value)).toMatch(allowed[key] as RegExp);
      expect(String(value)).not.toContain('example.com');
    }
  }
}

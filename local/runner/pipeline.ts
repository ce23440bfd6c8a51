/**
 * The local pipeline's scans: each item of a list runs the synthesized `ScanDomain` definition in
 * aws-local-stepfunctions, with each Task state bound to its real handler in-process. The list
 * run around them (upload, PrepareDomainList, the fan-out, WriteListSummary) is
 * domain-list-run.ts.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SFNClient } from '@aws-sdk/client-sfn';
import { ExecutionAbortedError, ExecutionError, type StateMachine } from 'aws-local-stepfunctions';
import {
  type DomainListItem,
  type DomainScanResult,
  INTERRUPTED_ERROR,
} from '#lambdas/domain-list/contracts';
import { domainResultFromFailure } from '#lambdas/domain-list/write-list-summary';
import { NO_METRICS, type PipelineMetrics } from '#lambdas/platform/metrics';
import type { PipelineLogger } from '#lambdas/platform/runtime/logger';
import type { ScanInProgress, ScanOutcome, StartThrottled } from '#lambdas/scan/contracts';
import type { ScanApi, ScanDeps } from '#lambdas/scan/deps';
import { createScanDeps } from '#lambdas/scan/deps';
import type { PollSettings } from '#lambdas/scan/poll-schedule';
import type { ListFields } from '#lambdas/scan/reconcile-settings';
import { createScanSettings } from '#lambdas/scan/settings';
import type { StatusVocabulary } from '#lambdas/vendor-api/scan/types';
import type { TaskHandlerFileOf } from '../../lambdas/registry.ts';
import { createDeleteScanHandler } from '../../lambdas/scan/delete-scan.ts';
import { createFetchScanOutputHandler } from '../../lambdas/scan/fetch-scan-output.ts';
import { createPollScanStatusHandler } from '../../lambdas/scan/poll-scan-status.ts';
import { createRecordScanFailureHandler } from '../../lambdas/scan/record-scan-failure.ts';
import { createStartScanHandler } from '../../lambdas/scan/start-scan.ts';
import { createWriteScanManifestHandler } from '../../lambdas/scan/write-scan-manifest.ts';
import type { ProgressListener } from '../output/progress.ts';
import type { AslDefinition } from '../synth/definitions.ts';
import { LocalTaskTokens, WAIT_STATE, waitForScanTask } from './early-end-watch.ts';
import {
  asJson,
  bindTaskHandlers,
  type HandlerFactory,
  type JSONValue,
  retryOverrides,
  type TaskHandler,
} from './task-binding.ts';

export interface LocalPipelineOptions {
  readonly s3: S3Client;
  readonly inputBucket: string;
  readonly resultsBucket: string;
  /** The synthesized ScanDomain definition. */
  readonly scanDefinition: AslDefinition;
  readonly scanClient: ScanApi;
  readonly poll: PollSettings;
  readonly statusVocabulary?: StatusVocabulary;
  /** Where `GET /scans` keeps its fields (`scan.reconciliation.listFields`). @default the common names */
  readonly listFields?: ListFields;
  /** Parallel per-domain executions, as the Distributed Map's MaxConcurrency. */
  readonly concurrency: number;
  /** Key prefix lists are uploaded under (the intake prefix). */
  readonly intakePrefix: string;
  /** Object-key suffixes accepted as domain lists (`intake.suffixes`). */
  readonly intakeSuffixes: readonly string[];
  /** Largest list object read (`intake.maxListBytes`). @default LIST_SIZE_LIMIT.default */
  readonly maxListBytes?: number;
  /** Special-use suffixes scanned anyway (`scan.allowSpecialUseDomains`). @default [] */
  readonly allowSpecialUse?: readonly string[];
  /** A scan output's byte cap after decoding (`scan.maxOutputBytes`). @default SCAN_OUTPUT_LIMIT.default */
  readonly maxOutputBytes?: number;
  /** How far a content-coded output may inflate (`scan.maxDecodingRatio`). @default SCAN_DECODING_LIMIT.default */
  readonly maxDecodingRatio?: number;
  /** Replaces every function's synthesized timeout (ms), for scaled-down runs. @default the template's */
  readonly lambdaTimeoutMs?: number;
  /** Replaces every Retry interval (ms); undefined keeps the definition's own backoff. */
  readonly retryIntervalMs?: number;
  /**
   * Replaces every WaitForScan and WaitForStartSlot wait (ms); undefined waits the seconds the poll
   * step asks for.
   */
  readonly waitOverrideMs?: number;
  /**
   * Replaces every sleep inside a handler invocation (ms): the vendor clients' retry backoff (set
   * where the clients are made, local/runner/local-run.ts) and StartScan's settle waits (here); undefined
   * sleeps what they compute.
   */
  readonly vendorBackoffMs?: number;
  readonly logger: PipelineLogger;
  /**
   * Adds the IAM evaluator's check to the early-end watcher's SFN client (its S3 calls go through
   * `s3`, already watched). @default unchecked
   */
  readonly watchClient?: <C extends SFNClient>(client: C) => C;
  /** Where the handlers' metrics go (the CLI keeps them for its summary). @default NO_METRICS */
  readonly metrics?: PipelineMetrics;
  readonly onProgress?: ProgressListener;
  /**
   * The user asked the run to stop (Ctrl-C): no domain starts after it, each one in flight stops
   * once its current step has finished, and the summary names both as `Interrupted`.
   */
  readonly stop?: AbortSignal;
}

export { INTERRUPTED_ERROR } from '#lambdas/domain-list/contracts';

/** Why the run stopped, as the stop signal's reason says (`SIGINT`), for the summary's messages. */
export function stopCause(stop: AbortSignal): string {
  const reason = stop.reason as { cause?: unknown } | undefined;
  return typeof reason?.cause === 'string' ? reason.cause : 'a stop request';
}

/**
 * Waits, retry intervals and in-invocation backoff replaced, for runs that are not about timing
 * (the CLI's tests). The CLI never sets them from the command line, and nothing deployed reads
 * them: a user's run waits what the definition and the handlers say.
 */
export type LocalTiming = Pick<
  LocalPipelineOptions,
  'retryIntervalMs' | 'waitOverrideMs' | 'vendorBackoffMs'
> & {
  /** How often a compact run prints its progress line (@default PROGRESS_INTERVAL_MS, 5 s). */
  readonly progressIntervalMs?: number;
};

/** The code of each scan handler file; which states it serves comes from lambdas/registry.ts. */
const SCAN_HANDLER_FACTORIES = {
  'start-scan': createStartScanHandler,
  'poll-scan-status': createPollScanStatusHandler,
  'fetch-scan-output': createFetchScanOutputHandler,
  'write-scan-manifest': createWriteScanManifestHandler,
  'record-scan-failure': createRecordScanFailureHandler,
  'delete-scan': createDeleteScanHandler,
} satisfies Record<TaskHandlerFileOf<'scan'>, HandlerFactory<ScanDeps>>;

/** Binds every Task state of the definition to its real handler, and checks none is left unbound. */
export function bindScanHandlers(
  definition: AslDefinition,
  options: Pick<
    LocalPipelineOptions,
    | 's3'
    | 'resultsBucket'
    | 'scanClient'
    | 'poll'
    | 'statusVocabulary'
    | 'listFields'
    | 'logger'
    | 'allowSpecialUse'
    | 'maxOutputBytes'
    | 'maxDecodingRatio'
    | 'lambdaTimeoutMs'
    | 'metrics'
    | 'vendorBackoffMs'
    | 'waitOverrideMs'
  > & {
    /** The task tokens WaitForScan waits on (the local watcher releases them). @default none shared */
    readonly tokens?: LocalTaskTokens;
  },
  clock: () => Date = () => new Date(),
): Record<string, TaskHandler> {
  const backoff = options.vendorBackoffMs;
  const deps = createScanDeps({
    s3: options.s3,
    scanClient: options.scanClient,
    logger: options.logger,
    metrics: options.metrics ?? NO_METRICS,
    clock,
    ...(backoff === undefined ? {} : { sleep: () => delay(backoff).then(() => {}) }),
    settings: createScanSettings({
      resultsBucket: options.resultsBucket,
      poll: options.poll,
      ...(options.statusVocabulary ? { statusVocabulary: options.statusVocabulary } : {}),
      allowSpecialUse: options.allowSpecialUse ?? [],
      ...(options.listFields ? { listFields: options.listFields } : {}),
      ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }),
      ...(options.maxDecodingRatio === undefined ? {} : { maxDecodingRatio: options.maxDecodingRatio }),
    }),
  });
  const waitForScan = waitForScanTask({
    s3: options.s3,
    resultsBucket: options.resultsBucket,
    tokens: options.tokens ?? new LocalTaskTokens(),
    ...(options.waitOverrideMs === undefined ? {} : { waitOverrideMs: options.waitOverrideMs }),
  });
  return bindTaskHandlers(definition, SCAN_HANDLER_FACTORIES, deps, 'ScanDomain', options.lambdaTimeoutMs, {
    [WAIT_STATE]: asJson(waitForScan as (event: unknown) => Promise<unknown>, WAIT_STATE),
  });
}

export interface ScanExecutionResult {
  readonly result: DomainScanResult;
  /** What Standard workflows bill: states entered, plus one per retry of a state. */
  readonly transitions: number;
  /**
   * The history events Step Functions would record: the engine's events, plus the three a Lambda
   * task adds in AWS per attempt (scheduled, started, succeeded/failed).
   */
  readonly historyEvents: number;
}

/** Runs one domain through the synthesized ScanDomain definition. */
export async function runScanExecution(
  machine: StateMachine,
  definition: AslDefinition,
  handlers: Record<string, TaskHandler>,
  item: Pick<DomainListItem, 'domain' | 'executionName' | 'runId'>,
  options: Pick<LocalPipelineOptions, 'retryIntervalMs' | 'waitOverrideMs' | 'onProgress' | 'stop'>,
): Promise<ScanExecutionResult> {
  const { domain, executionName, runId } = item;
  const report = options.onProgress;
  const tracked: Record<string, TaskHandler> = {};
  // The steps running now (the output fetches run in parallel): a stopped execution is only
  // reported once they have finished their writes.
  const running = new Set<Promise<unknown>>();
  // A stop that lands while the manifest is written still leaves a finished scan: its outcome.
  let manifestOutcome: ScanOutcome | undefined;
  for (const [name, handler] of Object.entries(handlers)) {
    tracked[name] = async (input) => {
      const step = Promise.resolve(handler(input));
      const settled = step.then(
        () => {},
        () => {},
      );
      running.add(settled);
      void settled.then(() => running.delete(settled));
      const output = await step;
      if (name === 'WriteManifest') manifestOutcome = output as unknown as ScanOutcome;
      if (name === 'PollScanStatus' || name === 'StartScan') {
        const state = output as unknown as Partial<ScanInProgress & StartThrottled>;
        const status = state.status;
        const wait = state.poll?.deadlineExceeded
          ? undefined
          : (state.poll?.nextWaitSeconds ?? state.startThrottle?.waitSeconds);
        const detail = [
          state.startThrottle ? 'start throttled by the vendor' : '',
          name === 'StartScan' && state.settledStart === 'adopted'
            ? 'start answer lost: adopted the scan it created'
            : name === 'StartScan' && state.settledStart === 'retried'
              ? 'start answer lost, no scan created: started again'
              : '',
          status?.vendorStatus ?? status?.state,
          status?.progress === undefined ? '' : `${status.progress}%`,
          // What it waits for next, so a long quiet stretch is never a mystery.
          wait === undefined || status?.state === 'succeeded' || status?.state === 'failed'
            ? ''
            : `waiting ${options.waitOverrideMs === undefined ? `${wait} s` : `${options.waitOverrideMs} ms (overridden)`}`,
        ]
          .filter(Boolean)
          .join(', ');
        report?.({ type: 'domain-state', domain, state: name, ...(detail ? { detail } : {}) });
      } else {
        report?.({ type: 'domain-state', domain, state: name });
      }
      return output;
    };
  }
  const execution = machine.run({ domain, runId } as JSONValue, {
    overrides: {
      taskResourceLocalHandlers: tracked,
      retryIntervalOverrides: retryOverrides(definition, options.retryIntervalMs),
      ...(options.waitOverrideMs === undefined
        ? {}
        : {
            waitTimeOverrides: {
              WaitForStartSlot: options.waitOverrideMs,
              WaitForScanUnrecorded: options.waitOverrideMs,
            },
          }),
    },
    // One task token per execution: the engine keeps one context per execution (early-end-watch.ts).
    context: {
      Execution: { Name: executionName, Id: `local:${executionName}` },
      Task: { Token: LocalTaskTokens.newToken() },
    } as never,
  });
  // The engine starts no further state once aborted, and cuts a Wait or a Retry interval short.
  const abort = () => execution.abort();
  options.stop?.addEventListener('abort', abort, { once: true });
  // Count as Step Functions would; consuming the log also keeps it from buffering.
  let events = 0;
  let transitions = 0;
  const lastError = new Map<string, string>();
  const counting = (async () => {
    for await (const event of execution.eventLogs) {
      events += 1;
      if (event.type === 'StateEntered') {
        transitions += 1;
        if (event.state.type === 'Task') events += 3;
      } else if (event.type === 'StateFailed') {
        lastError.set(event.state.name, event.Error);
      } else if (event.type === 'StateRetried') {
        // Standard workflows bill each retry as one more state transition (Step Functions pricing).
        transitions += 1;
        events += 3;
        report?.({
          type: 'state-retry',
          domain,
          state: event.state.name,
          error: lastError.get(event.state.name) ?? 'an error',
          attempt: event.retry.attempt,
          maxAttempts: event.retry.retrier.MaxAttempts ?? 3,
        });
      }
    }
  })();
  let result: DomainScanResult;
  /** The Fail state's error: the failure category (OutputFetchFailed), not the class behind it. */
  let category: string | undefined;
  try {
    const outcome = (await execution.result) as unknown as ScanOutcome;
    result = { domain, executionName, outcome, error: undefined };
  } catch (error) {
    if (error instanceof ExecutionAbortedError && options.stop?.aborted) {
      await Promise.all(running);
      if (manifestOutcome) {
        result = { domain, executionName, outcome: manifestOutcome, error: undefined };
      } else {
        category = INTERRUPTED_ERROR;
        result = interruptedResult(
          item,
          `stopped mid-scan by ${stopCause(options.stop)}: the vendor may have run it; what was stored is kept, without a manifest`,
        );
      }
    } else {
      const failure = error instanceof ExecutionError ? (error.cause as Error | undefined) : (error as Error);
      category = failure?.name;
      result = domainResultFromFailure(domain, executionName, failure?.name, failure?.message);
    }
  } finally {
    options.stop?.removeEventListener('abort', abort);
  }
  await counting;
  const state = result.outcome?.state ?? (category === INTERRUPTED_ERROR ? 'interrupted' : 'failed');
  report?.({
    type: 'domain-done',
    domain,
    result: state,
    ...(result.outcome?.error || result.error
      ? { detail: failureDetail(category, (result.outcome?.error ?? result.error)?.name) }
      : {}),
  });
  return { result, transitions, historyEvents: events };
}

/** A domain the run's stop kept from finishing, named as such in the summary. */
export function interruptedResult(
  item: Pick<DomainListItem, 'domain' | 'executionName'>,
  message: string,
): DomainScanResult {
  return {
    domain: item.domain,
    executionName: item.executionName,
    outcome: undefined,
    error: { name: INTERRUPTED_ERROR, message },
  };
}

/** `OutputFetchFailed: VendorUnavailableError`: the category first, then the error behind it. */
function failureDetail(category: string | undefined, errorName: string | undefined): string {
  if (category && errorName && category !== errorName) return `${category}: ${errorName}`;
  return category ?? errorName ?? '';
}

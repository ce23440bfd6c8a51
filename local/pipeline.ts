/**
 * The local pipeline: the same list run AWS performs, on this machine.
 *
 * - The domain list is uploaded to the (embedded) input bucket, as a user would.
 * - `PrepareDomainList` and `WriteListSummary` are the real handlers.
 * - The fan-out is done here, with the configured concurrency bound, because the local engine has
 *   no Distributed Map; every item runs the synthesized `ScanDomain` definition in
 *   aws-local-stepfunctions, with each Task state bound to its real handler in-process.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ExecutionAbortedError, ExecutionError, type StateMachine } from 'aws-local-stepfunctions';
import type {
  DomainListItem,
  DomainListSource,
  DomainScanResult,
  ListSummary,
  PreparedDomainList,
} from '#lambdas/domain-list/contracts';
import type { ListDeps } from '#lambdas/domain-list/deps';
import { domainResultFromFailure } from '#lambdas/domain-list/write-list-summary';
import { NO_METRICS, type PipelineMetrics } from '#lambdas/platform/metrics';
import type { PipelineLogger } from '#lambdas/platform/runtime/logger';
import type { StatusVocabulary } from '#lambdas/platform/vendor-api/types';
import type { ScanInProgress, ScanOutcome } from '#lambdas/scan/contracts';
import type { ScanApi, ScanDeps } from '#lambdas/scan/deps';
import { createScanDeps } from '#lambdas/scan/deps';
import type { PollSettings } from '#lambdas/scan/poll-schedule';
import type { ListFields } from '#lambdas/scan/reconcile-settings';
import { createScanSettings } from '#lambdas/scan/settings';
import { createPrepareDomainListHandler } from '../lambdas/domain-list/prepare-domain-list.ts';
import { createWriteListSummaryHandler } from '../lambdas/domain-list/write-list-summary.ts';
import type { TaskHandlerFileOf } from '../lambdas/registry.ts';
import { createDeleteScanHandler } from '../lambdas/scan/delete-scan.ts';
import { createFetchScanOutputHandler } from '../lambdas/scan/fetch-scan-output.ts';
import { createPollScanStatusHandler } from '../lambdas/scan/poll-scan-status.ts';
import { createRecordScanFailureHandler } from '../lambdas/scan/record-scan-failure.ts';
import { createStartScanHandler } from '../lambdas/scan/start-scan.ts';
import { createWriteScanManifestHandler } from '../lambdas/scan/write-scan-manifest.ts';
import type { AslDefinition } from './definitions.ts';
import { runAs } from './iam/attribution.ts';
import type { ProgressListener } from './progress.ts';
import {
  bindTaskHandlers,
  type HandlerFactory,
  type JSONValue,
  localStateMachine,
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
  /** Replaces every function's synthesized timeout (ms), for scaled-down runs. @default the template's */
  readonly lambdaTimeoutMs?: number;
  /** Replaces every Retry interval (ms); undefined keeps the definition's own backoff. */
  readonly retryIntervalMs?: number;
  /** Replaces every WaitForScan wait (ms); undefined waits the seconds the poll step asks for. */
  readonly waitOverrideMs?: number;
  /**
   * Replaces every sleep inside a handler invocation (ms): the vendor clients' retry backoff (set
   * where the clients are made, local/local-run.ts) and StartScan's settle waits (here); undefined
   * sleeps what they compute.
   */
  readonly vendorBackoffMs?: number;
  readonly logger: PipelineLogger;
  /** Where the handlers' metrics go (the CLI keeps them for its summary). @default NO_METRICS */
  readonly metrics?: PipelineMetrics;
  readonly onProgress?: ProgressListener;
  /**
   * The user asked the run to stop (Ctrl-C): no domain starts after it, each one in flight stops
   * once its current step has finished, and the summary names both as `Interrupted`.
   */
  readonly stop?: AbortSignal;
}

/** The error name the summary gives a domain that did not finish because the run was stopped. */
export const INTERRUPTED_ERROR = 'Interrupted';

/** Why the run stopped, as the stop signal's reason says (`SIGINT`), for the summary's messages. */
function stopCause(stop: AbortSignal): string {
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
>;

export interface DomainListRequest {
  /** Domains given on the command line. */
  readonly domains: readonly string[];
  /** A domain-list file: its name (for the object key) and bytes, uploaded unchanged. */
  readonly file?: { readonly name: string; readonly bytes: Uint8Array };
}

export interface LocalRunResult {
  readonly prepared: PreparedDomainList;
  readonly summaryKey: string;
  readonly summary: ListSummary;
  /** History events per domain, as Step Functions would count them (bench and tests read it). */
  readonly historyEvents: ReadonlyMap<string, number>;
}

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
    | 'lambdaTimeoutMs'
    | 'metrics'
    | 'vendorBackoffMs'
  >,
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
    }),
  });
  return bindTaskHandlers(definition, SCAN_HANDLER_FACTORIES, deps, 'ScanDomain', options.lambdaTimeoutMs);
}

export interface ScanExecutionResult {
  readonly result: DomainScanResult;
  /** States entered: what Standard workflows bill. */
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
        const state = output as unknown as ScanInProgress;
        const status = state.status;
        const wait = state.poll?.deadlineExceeded ? undefined : state.poll?.nextWaitSeconds;
        const detail = [
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
        : { waitTimeOverrides: { WaitForScan: options.waitOverrideMs } }),
    },
    context: { Execution: { Name: executionName, Id: `local:${executionName}` } } as never,
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
  const state = result.outcome?.state ?? 'failed';
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
function interruptedResult(
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

/** Runs `worker` over `items` with at most `limit` in flight; results keep the input order. */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  worker: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await worker(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

/**
 * The list object's key: the file's own name, or for domains typed on the command line a name of
 * ours that the intake takes whatever `intake.suffixes` says (`.txt` when it is among them, else
 * the first), since those suffixes are a rule for uploads, and no one uploaded anything.
 */
function listObjectKey(
  prefix: string,
  request: DomainListRequest,
  runStamp: string,
  suffixes: readonly string[],
): string {
  const suffix = suffixes.includes('.txt') ? '.txt' : (suffixes[0] ?? '.txt');
  const base =
    request.file && request.domains.length === 0 ? request.file.name : `command-line-${runStamp}${suffix}`;
  return `${prefix}${base.replace(/^.*[\\/]/, '')}`;
}

/**
 * The file goes first and unchanged, so the summary's line numbers are the user's own; domains
 * given on the command line follow it.
 */
function listBody(request: DomainListRequest): Uint8Array {
  if (request.domains.length === 0 && request.file) return request.file.bytes;
  const parts: Uint8Array[] = [];
  if (request.file) {
    parts.push(request.file.bytes);
    const last = request.file.bytes[request.file.bytes.length - 1];
    if (last !== undefined && last !== 0x0a) parts.push(Buffer.from('\n'));
  }
  parts.push(Buffer.from(`${request.domains.join('\n')}\n`, 'utf8'));
  return Buffer.concat(parts);
}

/** Uploads the list, prepares it, fans out over the synthesized ScanDomain and writes the summary. */
export async function runDomainList(
  options: LocalPipelineOptions,
  request: DomainListRequest,
): Promise<LocalRunResult> {
  const runStamp = new Date().toISOString().replace(/[:.]/g, '-');
  const key = listObjectKey(options.intakePrefix, request, runStamp, options.intakeSuffixes);
  const uploaded = await options.s3.send(
    new PutObjectCommand({
      Bucket: options.inputBucket,
      Key: key,
      Body: listBody(request),
      ContentType: 'text/plain',
    }),
  );
  // s3rver keeps no versions; each local upload stands for a new S3 version, so each run is its own.
  const source: DomainListSource = {
    type: 's3',
    bucket: options.inputBucket,
    key,
    versionId: uploaded.VersionId ?? `local-${runStamp}-${randomUUID().slice(0, 8)}`,
    ...(uploaded.ETag ? { etag: uploaded.ETag } : {}),
  };
  const listDeps: ListDeps = {
    s3: options.s3,
    logger: options.logger,
    settings: {
      resultsBucket: options.resultsBucket,
      inputBucket: options.inputBucket,
      suffixes: options.intakeSuffixes,
      ...(options.maxListBytes === undefined ? {} : { maxListBytes: options.maxListBytes }),
      allowSpecialUse: options.allowSpecialUse ?? [],
    },
  };
  const prepared = await runAs('prepare-domain-list', () =>
    createPrepareDomainListHandler(listDeps)({ source }),
  );
  options.onProgress?.({
    type: 'list-prepared',
    total: prepared.counts.valid,
    invalid: prepared.counts.invalid,
    duplicate: prepared.counts.duplicate,
    resultsPrefix: prepared.resultsPrefix,
  });

  // The Distributed Map's ItemReader reads items.json from S3; so do we.
  const itemsObject = await options.s3.send(
    new GetObjectCommand({ Bucket: prepared.resultsBucket, Key: prepared.itemsKey }),
  );
  const items = JSON.parse((await itemsObject.Body?.transformToString('utf8')) ?? '[]') as DomainListItem[];

  const machine = localStateMachine(options.scanDefinition);
  const handlers = bindScanHandlers(options.scanDefinition, options);
  const historyEvents = new Map<string, number>();
  const results = await mapWithConcurrency(items, options.concurrency, async (item) => {
    if (options.stop?.aborted) {
      return interruptedResult(item, `not started: the run was stopped by ${stopCause(options.stop)}`);
    }
    const run = await runScanExecution(machine, options.scanDefinition, handlers, item, options);
    historyEvents.set(item.domain, run.historyEvents);
    return run.result;
  });

  const written = await runAs('write-list-summary', () =>
    createWriteListSummaryHandler(listDeps)({ ...prepared, results }),
  );
  const summaryObject = await options.s3.send(
    new GetObjectCommand({ Bucket: prepared.resultsBucket, Key: written.summaryKey }),
  );
  const summary = JSON.parse((await summaryObject.Body?.transformToString('utf8')) ?? '{}') as ListSummary;
  return { prepared, summaryKey: written.summaryKey, summary, historyEvents };
}

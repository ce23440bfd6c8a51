/**
 * One breach report on this machine, as AWS runs it: the request object goes to the (embedded)
 * results bucket, then the synthesized BreachReport definition runs in aws-local-stepfunctions
 * with every Task bound to its real handler.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ExecutionError } from 'aws-local-stepfunctions';
import {
  BREACH_PREFIX,
  type BreachReportInput,
  breachExecutionName,
  type PersonRef,
  parseBreachRequest,
  personRef,
  type ReconOutput,
} from '#lambdas/breach/contracts';
import type { BreachApi, BreachDeps } from '#lambdas/breach/deps';
import { createBreachSettings } from '#lambdas/breach/deps';
import { breachRunPrefix } from '#lambdas/breach/identity';
import { BREACH_LIMITS, type BreachLimitName, type BreachLimits } from '#lambdas/breach/limits';
import type { BreachRunResult } from '#lambdas/breach/write-breach-manifest';
import { NO_METRICS, type PipelineMetrics } from '#lambdas/platform/metrics';
import { mapBounded } from '#lambdas/platform/runs/bounded';
import { getJson } from '#lambdas/platform/s3/json-objects';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';
import type { WatchlistDeps } from '#lambdas/watchlist/deps';
import { type PreparedWatchlist, prepareWatchlist } from '#lambdas/watchlist/prepare-watchlist';
import type { WatchlistItem } from '#lambdas/watchlist/watchlist-shards';
import {
  type PersonResult,
  personResult,
  type WatchlistSummary,
  writeWatchlistSummary,
} from '#lambdas/watchlist/write-watchlist-summary';
import { createArchiveBreachReportHandler } from '../../lambdas/breach/archive-breach-report.ts';
import { createBreachReconHandler } from '../../lambdas/breach/breach-recon.ts';
import { createRecordBreachFailureHandler } from '../../lambdas/breach/record-breach-failure.ts';
import { createWriteBreachManifestHandler } from '../../lambdas/breach/write-breach-manifest.ts';
import type { TaskHandlerFileOf } from '../../lambdas/registry.ts';
import { runAs } from '../services/iam/attribution.ts';
import type { AslDefinition } from '../synth/definitions.ts';
import {
  bindTaskHandlers,
  type HandlerFactory,
  type JSONValue,
  localStateMachine,
  retryOverrides,
  type TaskHandler,
} from './task-binding.ts';

const BREACH_HANDLER_FACTORIES = {
  'breach-recon': createBreachReconHandler,
  'archive-breach-report': createArchiveBreachReportHandler,
  'write-breach-manifest': createWriteBreachManifestHandler,
  'record-breach-failure': createRecordBreachFailureHandler,
} satisfies Record<TaskHandlerFileOf<'breach'>, HandlerFactory<BreachDeps>>;

export interface LocalBreachOptions {
  readonly s3: S3Client;
  readonly resultsBucket: string;
  /** The synthesized BreachReport definition. */
  readonly definition: AslDefinition;
  readonly breachClient: BreachApi;
  /** `breach.maxEmails`. */
  readonly maxEmails: number;
  /** The `breach` section's input bounds (`breach.maxArchiveBytes` …). @default DEFAULT_BREACH_LIMITS */
  readonly limits?: Partial<BreachLimits>;
  /** The key of the keyed hash that names people (at least 32 bytes). */
  readonly identityKey: string;
  readonly logger: VendorLogger;
  /** @default NO_METRICS */
  readonly metrics?: PipelineMetrics;
  /** Replaces every Retry interval (ms); undefined keeps the definition's own backoff. */
  readonly retryIntervalMs?: number;
  /**
   * Replaces the wait after a throttled recon (ms); undefined waits what Recon computed (the vendor's
   * Retry-After plus jitter), as the deployed machine does.
   */
  readonly waitOverrideMs?: number;
  readonly clock?: () => Date;
  /** Told every state's input and output as the engine enters and leaves it (tests read payloads). */
  readonly onStatePayload?: (state: string, payload: unknown) => void;
  /** Replaces bound handlers by state name (tests make one fail the way Lambda would). */
  readonly wrap?: (bound: Record<string, TaskHandler>) => Record<string, TaskHandler>;
}

export interface BreachRunRequest {
  /** As given: validated here by the workflow's own schema. */
  readonly name: unknown;
  readonly emails: unknown;
  /** Names the request; with the person it names the execution. */
  readonly requestId: string;
}

export type LocalBreachOutcome =
  | { readonly outcome: 'archived'; readonly result: BreachRunResult }
  | { readonly outcome: 'no_results'; readonly reconKey: string }
  | { readonly outcome: 'failed'; readonly error: string; readonly cause: string };

export type LocalBreachResult = LocalBreachOutcome & {
  readonly person: PersonRef;
  readonly executionName: string;
  readonly outputPrefix: string;
  /** States entered: what a Standard workflow bills. */
  readonly transitions: number;
  /**
   * The history events Step Functions would record: the engine's events, plus the three a Lambda
   * task adds in AWS per attempt (scheduled, started, succeeded/failed), as ScanDomain's are counted.
   */
  readonly historyEvents: number;
};

/** Only the limits from an object that may be the whole `breach` section. */
function pickLimits(from: Partial<BreachLimits> | undefined): Partial<BreachLimits> {
  if (from === undefined) return {};
  return Object.fromEntries(
    (Object.keys(BREACH_LIMITS) as BreachLimitName[]).flatMap((name) =>
      from[name] === undefined ? [] : [[name, from[name]]],
    ),
  );
}

/** `breach/requests/<16 hex>-<requestId>.json`: the only object that holds the addresses. */
export function requestObjectKey(person: PersonRef, requestId: string): string {
  return `${BREACH_PREFIX}requests/${person.id.slice(0, 16)}-${requestId}.json`;
}

export async function runBreachReport(
  options: LocalBreachOptions,
  request: BreachRunRequest,
): Promise<LocalBreachResult> {
  const settings = createBreachSettings({
    resultsBucket: options.resultsBucket,
    maxEmails: options.maxEmails,
    limits: pickLimits(options.limits),
  });
  // The same schema Recon applies: a bad address is refused before anything is stored.
  const parsed = parseBreachRequest(
    { name: request.name, emails: request.emails },
    { maxEmails: settings.maxEmails, root: '' },
  );
  const person = personRef(options.identityKey, parsed);
  const key = requestObjectKey(person, request.requestId);
  await options.s3.send(
    new PutObjectCommand({
      Bucket: options.resultsBucket,
      Key: key,
      Body: JSON.stringify({ name: parsed.name, emails: parsed.emails }),
      ContentType: 'application/json',
    }),
  );
  const input: BreachReportInput = {
    requestId: request.requestId,
    person,
    request: { bucket: options.resultsBucket, key },
  };
  const runner = breachRunner(options, settings);
  const executionName = breachExecutionName(person, request.requestId);
  const run = await runner(input, executionName);
  return { ...run, person, executionName, outputPrefix: breachRunPrefix(person, request.requestId) };
}

/** Runs BreachReport executions of one synthesized definition, each Task bound to its real handler. */
function breachRunner(
  options: LocalBreachOptions,
  settings: BreachDeps['settings'],
): (
  input: BreachReportInput,
  executionName: string,
) => Promise<LocalBreachOutcome & { transitions: number; historyEvents: number }> {
  const deps: BreachDeps = {
    s3: options.s3,
    breachClient: options.breachClient,
    logger: options.logger,
    settings,
    metrics: options.metrics ?? NO_METRICS,
    clock: options.clock ?? (() => new Date()),
    reportNamingKey: async () => localReportNamingKey(options.identityKey),
  };
  const bound = bindTaskHandlers(options.definition, BREACH_HANDLER_FACTORIES, deps, 'BreachReport');
  const handlers = options.wrap ? options.wrap(bound) : bound;
  const machine = localStateMachine(options.definition);
  return async (input, executionName) => {
    const execution = machine.run(input as unknown as JSONValue, {
      overrides: {
        taskResourceLocalHandlers: handlers,
        retryIntervalOverrides: retryOverrides(options.definition, options.retryIntervalMs),
        ...(options.waitOverrideMs === undefined
          ? {}
          : { waitTimeOverrides: { WaitForReconSlot: options.waitOverrideMs } }),
      },
      context: { Execution: { Name: executionName, Id: `local:${executionName}` } } as never,
    });
    let transitions = 0;
    let historyEvents = 0;
    const counting = (async () => {
      for await (const event of execution.eventLogs) {
        historyEvents += 1;
        // Standard workflows bill each retry as one more state transition (Step Functions pricing).
        if (event.type === 'StateEntered' || event.type === 'StateRetried') transitions += 1;
        if ((event.type === 'StateEntered' && event.state.type === 'Task') || event.type === 'StateRetried')
          historyEvents += 3;
        if (event.type === 'StateEntered' || event.type === 'StateExited') {
          options.onStatePayload?.(event.state.name, event.state.output ?? event.state.input);
        }
      }
    })();
    let outcome: LocalBreachOutcome;
    try {
      const output = (await execution.result) as unknown as BreachRunResult | ReconOutput;
      outcome =
        'manifestKey' in output
          ? { outcome: 'archived', result: output }
          : { outcome: 'no_results', reconKey: output.recon.reconKey };
    } catch (error) {
      const failure = error instanceof ExecutionError ? (error.cause as Error | undefined) : (error as Error);
      outcome = { outcome: 'failed', error: failure?.name ?? 'Error', cause: failure?.message ?? '' };
    }
    await counting;
    return { ...outcome, transitions, historyEvents };
  };
}

export interface LocalWatchlistOptions extends LocalBreachOptions {
  readonly inputBucket: string;
  /** `breach.watchlistPrefix`: where the watchlist is uploaded, as a user would. */
  readonly watchlistPrefix: string;
  /** People reported on at once, as the Distributed Map's MaxConcurrency. */
  readonly concurrency: number;
  /** `breach.maxWatchlistBytes` and `breach.maxWatchlistRows`. @default the workflow's defaults */
  readonly maxWatchlistBytes?: number;
  readonly maxWatchlistRows?: number;
  /** Told as each person's run ends. */
  readonly onPersonDone?: (item: WatchlistItem, outcome: LocalBreachOutcome) => void;
}

export interface LocalWatchlistResult {
  readonly prepared: PreparedWatchlist;
  readonly summaryKey: string;
  readonly counts: WatchlistSummary['counts'];
  /** Why the watchlist was refused as a whole, or null. */
  readonly refused: string | null;
}

/**
 * A watchlist run as AWS does it: upload, PrepareWatchlist, one BreachReport per person (the fan-out
 * is done here, with the configured bound, because the local engine has no Distributed Map), then
 * WriteWatchlistSummary over every row.
 */
export async function runWatchlist(
  options: LocalWatchlistOptions,
  file: { readonly name: string; readonly bytes: Uint8Array },
): Promise<LocalWatchlistResult> {
  const settings = createBreachSettings({
    resultsBucket: options.resultsBucket,
    maxEmails: options.maxEmails,
    limits: pickLimits(options.limits),
  });
  const key = `${options.watchlistPrefix}${file.name.replace(/^.*[\\/]/, '')}`;
  const uploaded = await options.s3.send(
    new PutObjectCommand({ Bucket: options.inputBucket, Key: key, Body: file.bytes }),
  );
  const deps: WatchlistDeps = {
    s3: options.s3,
    logger: options.logger,
    clock: options.clock ?? (() => new Date()),
    settings: {
      resultsBucket: options.resultsBucket,
      maxEmails: settings.maxEmails,
      ...(options.maxWatchlistBytes === undefined ? {} : { maxWatchlistBytes: options.maxWatchlistBytes }),
      ...(options.maxWatchlistRows === undefined ? {} : { maxWatchlistRows: options.maxWatchlistRows }),
    },
    identityKey: async () => options.identityKey,
  };
  // s3rver keeps no versions; each local upload stands for a new S3 version, so each run is its own.
  const stamp = `local-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}`;
  const prepared = await runAs('prepare-watchlist', () =>
    prepareWatchlist(deps, {
      source: { type: 's3', bucket: options.inputBucket, key, versionId: uploaded.VersionId ?? stamp },
    }),
  );
  const items = await getJson<WatchlistItem[]>(deps, prepared.resultsBucket, prepared.itemsKey);
  const runner = breachRunner(options, settings);
  const results = await mapBounded(items, options.concurrency, async (item): Promise<PersonResult> => {
    const { row: _row, executionName, ...input } = item;
    const outcome = await runner(input, executionName);
    options.onPersonDone?.(item, outcome);
    switch (outcome.outcome) {
      case 'archived':
        return personResult(executionName, outcome.result);
      case 'no_results':
        return { executionName, status: 'no_results', reconKey: outcome.reconKey };
      case 'failed':
        return personResult(executionName, undefined, outcome.error, outcome.cause);
    }
  });
  const written = await runAs('write-watchlist-summary', () =>
    writeWatchlistSummary(deps, { ...prepared, results }),
  );
  return { prepared, ...written };
}

/**
 * The report naming key of a local run: derived from its identity key (kept in
 * `<out>/.breach-identity-key`), so one file keeps both stable across runs into one `--out`. A
 * deployed stack has a secret of its own for each (lib/workflows/breach/breach-workflow.ts).
 */
export function localReportNamingKey(identityKey: string): string {
  return createHmac('sha256', identityKey).update('breach report folders').digest('hex');
}

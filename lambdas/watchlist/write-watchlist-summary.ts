/**
 * `WriteWatchlistSummary`, the last step of a watchlist run: join the people's results (each a
 * child BreachReport execution of the Distributed Map) with the rows PrepareWatchlist recorded,
 * write summary.json, and announce the finished run.
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SFNClient } from '@aws-sdk/client-sfn';
import * as z from 'zod/mini';
import type { BreachReportInput } from '#lambdas/breach/contracts';
import { parseWith } from '#lambdas/platform/input/schema';
import { redactText } from '#lambdas/platform/redaction/redact';
import { mapBounded } from '#lambdas/platform/runs/bounded';
import {
  DESCRIBE_EXECUTION_CONCURRENCY,
  type IterationResult,
  readIterationResults,
  tryJson,
} from '#lambdas/platform/runs/fan-out-results';
import { announceRunFinished } from '#lambdas/platform/runs/run-events';
import { eventBridgeRunEvents } from '#lambdas/platform/runtime/event-bridge';
import { sfnExecutionLookup } from '#lambdas/platform/runtime/execution-lookup';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { getJson, putJson } from '#lambdas/platform/s3/json-objects';
import {
  WATCHLIST_RUN_FINISHED,
  type WatchlistSource,
  watchlistSourceSchema,
} from '#lambdas/watchlist/contracts';
import { type WatchlistDeps, watchlistDepsFromEnvironment } from '#lambdas/watchlist/deps';
import type { PreparedWatchlist } from '#lambdas/watchlist/prepare-watchlist';
import type { WatchlistRejection } from '#lambdas/watchlist/watchlist';
import type { WatchlistItem } from '#lambdas/watchlist/watchlist-shards';

export type WatchlistRowStatus = 'archived' | 'no_results' | 'failed' | 'invalid' | 'duplicate';

export interface WatchlistSummaryRow {
  readonly row: number;
  readonly status: WatchlistRowStatus;
  readonly person?: BreachReportInput['person'];
  readonly executionName?: string;
  /** The archive's manifest (archived), recon.json (no_results) or failure (failed). */
  readonly manifestKey?: string;
  readonly reconKey?: string;
  readonly error?: { readonly name: string; readonly message: string };
  readonly reason?: string;
}

export interface WatchlistSummary {
  readonly schemaVersion: 1;
  readonly runId: string;
  readonly source: WatchlistSource;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly counts: Record<WatchlistRowStatus, number> & {
    readonly rows: number;
    readonly ignoredLines: number;
  };
  readonly headerRow: number | null;
  /** Why the watchlist was refused as a whole (then no row was read), or null. */
  readonly refused: string | null;
  readonly rows: readonly WatchlistSummaryRow[];
}

/** What one child returned or how it failed, keyed by its execution name. */
export interface PersonResult {
  readonly executionName: string;
  readonly status: 'archived' | 'no_results' | 'failed';
  readonly manifestKey?: string;
  readonly reconKey?: string;
  readonly error?: { readonly name: string; readonly message: string };
}

/**
 * A child's outcome from its output (BreachReport's ReportArchived or NoBreachesFound) or from
 * its failure, whose cause is the failure record RecordBreachFailure wrote.
 */
export function personResult(
  executionName: string,
  output: unknown,
  error?: unknown,
  cause?: unknown,
): PersonResult {
  const value = tryJson(output) as Record<string, unknown> | undefined;
  if (value && typeof value.manifestKey === 'string') {
    return { executionName, status: 'archived', manifestKey: value.manifestKey };
  }
  const recon = value?.recon as { status?: unknown; reconKey?: unknown } | undefined;
  if (recon?.status === 'no_results' && typeof recon.reconKey === 'string') {
    return { executionName, status: 'no_results', reconKey: recon.reconKey };
  }
  let name = typeof error === 'string' ? error : 'ResultUnreadable';
  let message = typeof cause === 'string' ? cause : 'the child returned neither an outcome nor an error';
  // In AWS a failed child surfaces as States.TaskFailed whose cause is its DescribeExecution JSON.
  const described = tryJson(cause) as Record<string, unknown> | undefined;
  if (described && typeof described.Error === 'string') name = described.Error;
  if (described && typeof described.Cause === 'string') message = described.Cause;
  // Usually a failure record's message, already clean; a Map-level error's cause is not.
  return { executionName, status: 'failed', error: { name, message: redactText(message).slice(0, 1024) } };
}

const ALREADY_EXISTS = 'StepFunctions.ExecutionAlreadyExistsException';

/**
 * A redriven watchlist run starts a person's child under the same name again; one that already
 * finished answers ExecutionAlreadyExists. That is no failure of the person's report: the earlier
 * execution's own outcome is looked up and recorded instead.
 */
async function resolveEarlierExecution(deps: WatchlistDeps, result: PersonResult): Promise<PersonResult> {
  if (result.error?.name !== ALREADY_EXISTS || !deps.executions) return result;
  const earlier = await deps.executions.describe(result.executionName);
  if ('output' in earlier) return personResult(result.executionName, earlier.output);
  if ('cause' in earlier) return personResult(result.executionName, undefined, earlier.error, earlier.cause);
  return personResult(
    result.executionName,
    undefined,
    'ReportStillRunning',
    `the earlier execution of this person's report is ${earlier.status}`,
  );
}

function resultFromIteration(entry: IterationResult): PersonResult | undefined {
  const output = tryJson(entry.output) as Record<string, unknown> | undefined;
  const executionName = String(output?.executionName ?? entry.input?.executionName ?? '');
  if (executionName === '') return undefined;
  if (output && 'output' in output) return personResult(executionName, output.output);
  const caught = output?.caught as { Error?: unknown; Cause?: unknown } | undefined;
  return personResult(executionName, undefined, caught?.Error ?? entry.error, caught?.Cause ?? entry.cause);
}

export async function writeWatchlistSummary(
  deps: WatchlistDeps,
  prepared: PreparedWatchlist & {
    readonly mapResult?: { readonly ResultWriterDetails: { readonly Bucket: string; readonly Key: string } };
    readonly results?: readonly PersonResult[];
  },
): Promise<{ summaryKey: string; counts: WatchlistSummary['counts']; refused: string | null }> {
  const results =
    prepared.results ??
    (prepared.mapResult
      ? (await readIterationResults(deps, prepared.mapResult)).flatMap(
          (entry) => resultFromIteration(entry) ?? [],
        )
      : []);
  const resolved = await mapBounded(results, DESCRIBE_EXECUTION_CONCURRENCY, (result) =>
    resolveEarlierExecution(deps, result),
  );
  const byName = new Map(resolved.map((result) => [result.executionName, result]));
  const items = await getJson<WatchlistItem[]>(deps, prepared.resultsBucket, prepared.itemsKey);
  const { headerRow, rejected, refused } = await getJson<{
    headerRow: number | null;
    rejected: WatchlistRejection[];
    refused?: string | null;
  }>(deps, prepared.resultsBucket, prepared.rowsKey);
  const rows: WatchlistSummaryRow[] = rejected.map(({ row, status, reason }) => ({ row, status, reason }));
  for (const item of items) {
    // A child with no result at all (a Map-level failure) still has its row, as failed.
    const result =
      byName.get(item.executionName) ??
      personResult(item.executionName, undefined, 'NoResult', 'the run recorded no result for this person');
    rows.push({
      row: item.row,
      status: result.status,
      person: item.person,
      executionName: item.executionName,
      ...(result.manifestKey ? { manifestKey: result.manifestKey } : {}),
      ...(result.reconKey ? { reconKey: result.reconKey } : {}),
      ...(result.error ? { error: result.error } : {}),
    });
  }
  rows.sort((a, b) => a.row - b.row);
  const counts = { archived: 0, no_results: 0, failed: 0, invalid: 0, duplicate: 0 };
  for (const row of rows) counts[row.status] += 1;
  const summary: WatchlistSummary = {
    schemaVersion: 1,
    runId: prepared.runId,
    source: prepared.source,
    startedAt: prepared.startedAt,
    finishedAt: deps.clock().toISOString(),
    counts: { ...counts, rows: rows.length, ignoredLines: prepared.counts.ignoredLines },
    headerRow,
    refused: refused ?? null,
    rows,
  };
  const summaryKey = `${prepared.resultsPrefix}summary.json`;
  await putJson(deps, summaryKey, summary, 2);
  deps.logger.info('Watchlist summary written', { runId: prepared.runId, summaryKey, ...summary.counts });
  await announceRunFinished(deps, {
    kind: WATCHLIST_RUN_FINISHED.kind,
    runId: prepared.runId,
    trigger: prepared.source.type,
    counts: summary.counts,
    summary: `s3://${prepared.resultsBucket}/${summaryKey}`,
    finishedAt: summary.finishedAt,
    refused: summary.refused,
  });
  return { summaryKey, counts: summary.counts, refused: summary.refused };
}

const text = () =>
  z
    .string({ error: 'must be a non-empty string' })
    .check(z.minLength(1, { error: 'must be a non-empty string' }));

const preparedWatchlistSchema = z.looseObject({
  runId: text(),
  source: watchlistSourceSchema,
  startedAt: text(),
  resultsBucket: text(),
  resultsPrefix: text(),
  itemsKey: text(),
  rowsKey: text(),
  counts: z.looseObject({ ignoredLines: z.number() }),
  mapResult: z.optional(
    z.looseObject({ ResultWriterDetails: z.looseObject({ Bucket: text(), Key: text() }) }),
  ),
});

/** WriteWatchlistSummary's input: PrepareWatchlist's output plus the Map's ResultWriter location. */
export function parseWatchlistSummaryInput(event: unknown): Parameters<typeof writeWatchlistSummary>[1] {
  return parseWith(preparedWatchlistSchema, event) as unknown as Parameters<typeof writeWatchlistSummary>[1];
}

type SummaryResult = Awaited<ReturnType<typeof writeWatchlistSummary>>;

export function createWriteWatchlistSummaryHandler(deps: WatchlistDeps): Handler<unknown, SummaryResult> {
  return async (event) => writeWatchlistSummary(deps, parseWatchlistSummaryInput(event));
}

// S3, DescribeExecution of a redriven run's children, and the run-finished event: the identity key
// is not needed to summarise.
export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) =>
    watchlistDepsFromEnvironment(process.env, tools, {
      s3: tracedS3Client(tools),
      executions: (arn, observability) =>
        sfnExecutionLookup(observability.tracer.captureAWSv3Client(new SFNClient({})), arn),
      events: (observability) =>
        eventBridgeRunEvents(
          observability.tracer.captureAWSv3Client(new EventBridgeClient({})),
          WATCHLIST_RUN_FINISHED.detailType,
        ),
    }),
  handler: createWriteWatchlistSummaryHandler,
});

/**
 * A watchlist run: PrepareWatchlist reads the watchlist once, stores the people's requests in
 * shards under the run's prefix (one line each) and lists the people (hashed, each with its shard
 * and the bytes of its line) in items.json for the Distributed
 * Map; each runs as a child BreachReport execution; WriteWatchlistSummary accounts for every row.
 */

import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import * as z from 'zod/mini';
import { BREACH_PREFIX, type BreachReportInput, slugOf } from '#lambdas/breach/contracts';
import { forEachBounded, mapBounded } from '#lambdas/platform/bounded';
import { InvalidInputError } from '#lambdas/platform/errors';
import {
  DESCRIBE_EXECUTION_CONCURRENCY,
  type ExecutionLookup,
  type IterationResult,
  readIterationResults,
  tryJson,
} from '#lambdas/platform/fan-out-results';
import { runIdFor } from '#lambdas/platform/naming';
import { redactText } from '#lambdas/platform/redact';
import { announceRunFinished, type RunEventPublisher } from '#lambdas/platform/run-events';
import { getJson, putJson } from '#lambdas/platform/s3/json-objects';
import { parseWith } from '#lambdas/platform/schema';
import type { VendorLogger } from '#lambdas/platform/vendor-api/types';
import { type WatchlistSource, watchlistInputSchema, watchlistSourceSchema } from './contracts.ts';
import {
  DEFAULT_MAX_WATCHLIST_BYTES,
  DEFAULT_MAX_WATCHLIST_ROWS,
  type ParsedWatchlist,
  parseWatchlist,
  type WatchlistRejection,
  watchlistFormatOf,
} from './watchlist.ts';
import { shardRequests, type WatchlistItem } from './watchlist-shards.ts';

const text = () =>
  z
    .string({ error: 'must be a non-empty string' })
    .check(z.minLength(1, { error: 'must be a non-empty string' }));

export interface WatchlistDeps {
  readonly s3: S3Client;
  /** Told when a run's summary is written (WriteWatchlistSummary only). */
  readonly events?: RunEventPublisher;
  readonly logger: VendorLogger;
  readonly clock: () => Date;
  readonly settings: {
    readonly resultsBucket: string;
    readonly maxEmails: number;
    /** @default DEFAULT_MAX_WATCHLIST_BYTES */
    readonly maxWatchlistBytes?: number;
    /** @default DEFAULT_MAX_WATCHLIST_ROWS */
    readonly maxWatchlistRows?: number;
    /** Request objects written at once. @default WATCHLIST_WRITE_CONCURRENCY */
    readonly writeConcurrency?: number;
  };
  /** The key of the keyed hash that names people (Secrets Manager in AWS). */
  readonly identityKey: () => Promise<string>;
  /** Finds a child that already ran, for a redriven run (the summary step only). */
  readonly executions?: ExecutionLookup;
}

export interface PreparedWatchlist {
  readonly runId: string;
  readonly source: WatchlistSource;
  readonly startedAt: string;
  readonly resultsBucket: string;
  readonly resultsPrefix: string;
  readonly itemsKey: string;
  readonly rowsKey: string;
  readonly counts: {
    readonly rows: number;
    readonly valid: number;
    readonly invalid: number;
    readonly duplicate: number;
    readonly ignoredLines: number;
  };
}

/**
 * Shards PrepareWatchlist writes at once. At 25 ms a PUT and WATCHLIST_SHARD_PEOPLE people a
 * shard, 100,000 people are 100 PUTs: a few seconds. Far below the 3,500 PUTs a second S3
 * supports per partitioned prefix; a 503 SlowDown is retried by the SDK
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance.html).
 */
export const WATCHLIST_WRITE_CONCURRENCY = 32;

export { WATCHLIST_SHARD_PEOPLE, type WatchlistItem } from './watchlist-shards.ts';

export async function prepareWatchlist(deps: WatchlistDeps, event: unknown): Promise<PreparedWatchlist> {
  const { source } = parseWith(watchlistInputSchema, event);
  const format = watchlistFormatOf(source.key);
  if (format === undefined)
    throw new InvalidInputError('source.key', 'must end with .csv or .json to be a watchlist');
  // The same identity rule as a domain-list run: the object's version, or the schedule's fire.
  const runId = runIdFor(source);
  const name = slugOf(source.key.replace(/^.*\//, '').replace(/\.[^.]*$/, ''));
  const resultsPrefix = `${BREACH_PREFIX}watchlists/${source.type === 'schedule' ? `schedules/${slugOf(source.scheduleName)}` : name}/${runId}/`;
  const identityKey = await deps.identityKey();
  let parsed: ParsedWatchlist;
  let refused: string | undefined;
  try {
    parsed = parseWatchlist(await readWatchlist(deps, source), format, {
      identityKey,
      maxEmails: deps.settings.maxEmails,
      maxRows: deps.settings.maxWatchlistRows ?? DEFAULT_MAX_WATCHLIST_ROWS,
    });
  } catch (error) {
    // A watchlist refused as a whole (too large, not UTF-8, not a JSON list) still gets a run
    // folder and a summary that says why, as a refused domain list does.
    if (!(error instanceof InvalidInputError)) throw error;
    refused = error.message;
    parsed = { format, people: [], rejected: [], headerRow: undefined, rows: 0, ignoredLines: 0 };
  }
  const bucket = deps.settings.resultsBucket;
  const { items, shards } = shardRequests(parsed.people, {
    runId,
    bucket,
    requestsPrefix: `${resultsPrefix}requests/`,
  });
  // The only copy of each person's addresses in this run: Recon reads its own line, nothing else
  // reads them. Written WATCHLIST_WRITE_CONCURRENCY shards at a time.
  await forEachBounded(
    shards,
    deps.settings.writeConcurrency ?? WATCHLIST_WRITE_CONCURRENCY,
    async (shard) => {
      await deps.s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: shard.key,
          Body: shard.body,
          ContentType: 'application/x-ndjson',
        }),
      );
    },
  );
  const itemsKey = `${resultsPrefix}items.json`;
  const rowsKey = `${resultsPrefix}rows.json`;
  await putJson(deps, itemsKey, items);
  await putJson(deps, rowsKey, {
    headerRow: parsed.headerRow ?? null,
    rejected: parsed.rejected,
    refused: refused ?? null,
  });
  const invalid = parsed.rejected.filter((r) => r.status === 'invalid').length;
  const prepared: PreparedWatchlist = {
    runId,
    source,
    startedAt: deps.clock().toISOString(),
    resultsBucket: bucket,
    resultsPrefix,
    itemsKey,
    rowsKey,
    counts: {
      rows: parsed.rows,
      valid: items.length,
      invalid,
      duplicate: parsed.rejected.length - invalid,
      ignoredLines: parsed.ignoredLines,
    },
  };
  if (refused) deps.logger.warn('Watchlist refused', { runId, resultsPrefix, reason: refused });
  else deps.logger.info('Watchlist prepared', { runId, resultsPrefix, ...prepared.counts });
  return prepared;
}

async function readWatchlist(deps: WatchlistDeps, source: WatchlistSource): Promise<Uint8Array> {
  const limit = deps.settings.maxWatchlistBytes ?? DEFAULT_MAX_WATCHLIST_BYTES;
  const versionId = source.type === 's3' ? source.versionId : undefined;
  const target = { Bucket: source.bucket, Key: source.key, ...(versionId ? { VersionId: versionId } : {}) };
  // Refused before a byte is read: a huge upload must not exhaust the function's memory.
  const head = await deps.s3.send(new HeadObjectCommand(target));
  if ((head.ContentLength ?? 0) > limit) {
    throw new InvalidInputError('watchlist', `is ${head.ContentLength} bytes; at most ${limit} are read`);
  }
  const object = await deps.s3.send(new GetObjectCommand(target));
  return (await object.Body?.transformToByteArray()) ?? new Uint8Array();
}

// ---------------------------------------------------------------------------------------------
// Summary
// ---------------------------------------------------------------------------------------------

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
    kind: 'watchlist',
    runId: prepared.runId,
    trigger: prepared.source.type,
    counts: summary.counts,
    summary: `s3://${prepared.resultsBucket}/${summaryKey}`,
    finishedAt: summary.finishedAt,
    refused: summary.refused,
  });
  return { summaryKey, counts: summary.counts, refused: summary.refused };
}

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

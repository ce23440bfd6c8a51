/**
 * `PrepareWatchlist`, the first step of a watchlist run: read the watchlist once, store the
 * people's requests in shards under the run's prefix (one line each) and list the people (hashed,
 * each with its shard and the bytes of its line) in items.json for the Distributed Map; each runs
 * as a child BreachReport execution, and WriteWatchlistSummary accounts for every row.
 */
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { BREACH_PREFIX, slugOf } from '#lambdas/breach/contracts';
import { InvalidInputError } from '#lambdas/platform/errors';
import { parseWith } from '#lambdas/platform/input/schema';
import { forEachBounded } from '#lambdas/platform/runs/bounded';
import { runIdFor } from '#lambdas/platform/runs/naming';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { putJson } from '#lambdas/platform/s3/json-objects';
import { type WatchlistSource, watchlistInputSchema } from '#lambdas/watchlist/contracts';
import { type WatchlistDeps, watchlistDepsFromEnvironment } from '#lambdas/watchlist/deps';
import {
  DEFAULT_MAX_WATCHLIST_BYTES,
  DEFAULT_MAX_WATCHLIST_ROWS,
  type ParsedWatchlist,
  parseWatchlist,
  watchlistFormatOf,
} from '#lambdas/watchlist/watchlist';
import { shardRequests } from '#lambdas/watchlist/watchlist-shards';
import { identityKeyFromSecret } from './identity-key.ts';

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
      fileName: source.key.replace(/^.*\//, ''),
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

export function createPrepareWatchlistHandler(deps: WatchlistDeps): Handler<unknown, PreparedWatchlist> {
  return async (event) => prepareWatchlist(deps, event);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) =>
    watchlistDepsFromEnvironment(process.env, tools, {
      s3: tracedS3Client(tools),
      identityKey: identityKeyFromSecret(),
    }),
  handler: createPrepareWatchlistHandler,
});

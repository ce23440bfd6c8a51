/** `WriteWatchlistSummary`: join the people's results with the rows and write summary.json. */

import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { tracedS3Client } from '#core/runtime/s3-client';
import { watchlistDepsFromEnvironment } from '#core/runtime/watchlist-deps';
import {
  parseWatchlistSummaryInput,
  type WatchlistDeps,
  writeWatchlistSummary,
} from '#core/workflows/breach/watchlist-run';

type SummaryResult = Awaited<ReturnType<typeof writeWatchlistSummary>>;

export function createWriteWatchlistSummaryHandler(deps: WatchlistDeps): Handler<unknown, SummaryResult> {
  return async (event) => writeWatchlistSummary(deps, parseWatchlistSummaryInput(event));
}

// Reads and writes S3 only: the identity key is not needed to summarise.
export const handler = createLazyHandler({
  deps: (tools) => watchlistDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createWriteWatchlistSummaryHandler,
});

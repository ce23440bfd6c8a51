/** `PrepareWatchlist`: read the watchlist once, store a request per person, list them for the Map. */

import { identityKeyFromSecret } from '#lambdas/platform/runtime/identity-key';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { watchlistDepsFromEnvironment } from '#lambdas/watchlist/deps';
import {
  type PreparedWatchlist,
  prepareWatchlist,
  type WatchlistDeps,
} from '#lambdas/watchlist/watchlist-run';

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

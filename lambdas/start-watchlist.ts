/**
 * EventBridge target: an uploaded watchlist starts one WatchlistRun, named after the object's
 * version so a redelivered event becomes a duplicate, not a second run. The domain-list intake's
 * code, bound to the watchlist machine, prefix and suffixes.
 */
import { intakeDepsFromEnvironment } from '#core/runtime/list-deps';
import { createLazyHandler } from '#core/runtime/observability';
import { createStartDomainListHandler } from './start-domain-list.ts';

export const createStartWatchlistHandler = createStartDomainListHandler;

export const handler = createLazyHandler({
  deps: (tools) => intakeDepsFromEnvironment(process.env, tools),
  handler: createStartWatchlistHandler,
});

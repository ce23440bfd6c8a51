/**
 * EventBridge target: an uploaded watchlist starts one WatchlistRun, named after the object's
 * version so a redelivered event becomes a duplicate, not a second run. The domain-list intake's
 * code, bound to the watchlist machine, prefix and suffixes.
 */
import { intakeDepsFromEnvironment } from '#lambdas/domain-list/deps';
import { createLazyHandler } from '#lambdas/platform/runtime/observability';
import { createStartDomainListHandler } from '../../domain-list/handlers/start-domain-list.ts';

export const createStartWatchlistHandler = createStartDomainListHandler;

export const handler = createLazyHandler({
  deps: (tools) => intakeDepsFromEnvironment(process.env, tools),
  handler: createStartWatchlistHandler,
});

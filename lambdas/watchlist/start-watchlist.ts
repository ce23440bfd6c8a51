/**
 * EventBridge and Scheduler target: an uploaded watchlist (or a schedule fire naming one) starts
 * one WatchlistRun, named after the object's version so a redelivered event becomes a duplicate,
 * not a second run. The platform's object intake, bound to the watchlist machine, prefix and
 * suffixes, and to the watchlist's input schema.
 */
import { type IntakeDecision, type IntakeDeps, startRuns } from '#lambdas/platform/intake';
import { objectIntakeDepsFromEnvironment } from '#lambdas/platform/runtime/intake-deps';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { parseWith } from '#lambdas/platform/schema';
import { watchlistInputSchema } from '#lambdas/watchlist/contracts';

export function createStartWatchlistHandler(deps: IntakeDeps): Handler<unknown, IntakeDecision[]> {
  return async (event) => startRuns(deps, event);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) =>
    objectIntakeDepsFromEnvironment(process.env, tools, {
      parseInput: (event) => parseWith(watchlistInputSchema, event),
      runKind: 'watchlist',
    }),
  handler: createStartWatchlistHandler,
});

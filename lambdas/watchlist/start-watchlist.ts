/**
 * EventBridge and Scheduler target: an uploaded watchlist (or a schedule fire naming one) starts
 * one WatchlistRun, named after the object's version so a redelivered event becomes a duplicate,
 * not a second run: the platform's object intake (watchlistIntakeDepsFromEnvironment binds it).
 */
import { type IntakeDecision, type IntakeDeps, startRuns } from '#lambdas/platform/runs/intake';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { watchlistIntakeDepsFromEnvironment } from '#lambdas/watchlist/deps';

export function createStartWatchlistHandler(deps: IntakeDeps): Handler<unknown, IntakeDecision[]> {
  return async (event) => startRuns(deps, event);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => watchlistIntakeDepsFromEnvironment(process.env, tools),
  handler: createStartWatchlistHandler,
});

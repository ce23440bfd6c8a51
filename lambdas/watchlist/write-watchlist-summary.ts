/** `WriteWatchlistSummary`: join the people's results with the rows and write summary.json. */

import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SFNClient } from '@aws-sdk/client-sfn';
import { eventBridgeRunEvents } from '#lambdas/platform/runtime/event-bridge';
import { sfnExecutionLookup } from '#lambdas/platform/runtime/execution-lookup';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { watchlistDepsFromEnvironment } from '#lambdas/watchlist/deps';
import {
  parseWatchlistSummaryInput,
  type WatchlistDeps,
  writeWatchlistSummary,
} from '#lambdas/watchlist/watchlist-run';

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
        eventBridgeRunEvents(observability.tracer.captureAWSv3Client(new EventBridgeClient({}))),
    }),
  handler: createWriteWatchlistSummaryHandler,
});

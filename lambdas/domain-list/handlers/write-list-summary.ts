/** `WriteListSummary`: join the Map results with the list and write summary.json. */

import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { writeSummaryInputSchema } from '#lambdas/domain-list/contracts';
import { listDepsFromEnvironment } from '#lambdas/domain-list/deps';
import type { ListDeps } from '#lambdas/domain-list/list';
import { writeListSummary } from '#lambdas/domain-list/list-summary';
import { eventBridgeRunEvents } from '#lambdas/platform/runtime/event-bridge';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { parseWith } from '#lambdas/platform/schema';

type SummaryResult = Awaited<ReturnType<typeof writeListSummary>>;

export function createWriteListSummaryHandler(deps: ListDeps): Handler<unknown, SummaryResult> {
  return async (event) => writeListSummary(deps, parseWith(writeSummaryInputSchema, event));
}

export const handler = createLazyHandler({
  deps: (tools) =>
    listDepsFromEnvironment(process.env, tools, {
      events: (observability) =>
        eventBridgeRunEvents(observability.tracer.captureAWSv3Client(new EventBridgeClient({}))),
    }),
  handler: createWriteListSummaryHandler,
});

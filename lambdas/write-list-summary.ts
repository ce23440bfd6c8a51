/** `WriteListSummary`: join the Map results with the list and write summary.json. */

import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { eventBridgeRunEvents } from '#core/runtime/event-bridge';
import { listDepsFromEnvironment } from '#core/runtime/list-deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { parseWith } from '#core/schema';
import { writeSummaryInputSchema } from '#core/workflows/list/contracts';
import { type ListDeps, writeListSummary } from '#core/workflows/list/list';

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

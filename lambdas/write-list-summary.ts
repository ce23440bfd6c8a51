/** `WriteListSummary`: join the Map results with the list and write summary.json. */

import { InvalidInputError } from '#core/errors';
import { listDepsFromEnvironment } from '#core/runtime/list-deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { type ListDeps, type WriteSummaryInput, writeListSummary } from '#core/workflows/list/list';

type SummaryResult = Awaited<ReturnType<typeof writeListSummary>>;

function parseSummaryInput(event: unknown): WriteSummaryInput {
  const input = event as Partial<WriteSummaryInput> | null;
  for (const field of ['runId', 'resultsPrefix', 'resultsBucket', 'itemsKey', 'rejectsKey'] as const) {
    if (typeof input?.[field] !== 'string') throw new InvalidInputError(field, 'is missing');
  }
  if (typeof input?.counts !== 'object' || input.counts === null)
    throw new InvalidInputError('counts', 'is missing');
  if (typeof input.source !== 'object' || input.source === null)
    throw new InvalidInputError('source', 'is missing');
  return input as WriteSummaryInput;
}

export function createWriteListSummaryHandler(deps: ListDeps): Handler<unknown, SummaryResult> {
  return async (event) => writeListSummary(deps, parseSummaryInput(event));
}

export const handler = createLazyHandler({
  deps: (tools) => listDepsFromEnvironment(process.env, tools),
  handler: createWriteListSummaryHandler,
});

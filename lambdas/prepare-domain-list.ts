/** `PrepareDomainList`: parse the uploaded or scheduled list, write items.json for the Distributed Map. */

import { listDepsFromEnvironment } from '#core/runtime/list-deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import type { PreparedDomainList } from '#core/workflows/list/contracts';
import { type ListDeps, parseDomainListInput, prepareDomainList } from '#core/workflows/list/list';

export function createPrepareDomainListHandler(deps: ListDeps): Handler<unknown, PreparedDomainList> {
  return async (event) => prepareDomainList(deps, parseDomainListInput(event));
}

export const handler = createLazyHandler({
  deps: (tools) => listDepsFromEnvironment(process.env, tools),
  handler: createPrepareDomainListHandler,
});

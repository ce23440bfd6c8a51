/** `PrepareDomainList`: parse the uploaded or scheduled list, write items.json for the Distributed Map. */

import type { PreparedDomainList } from '#lambdas/domain-list/contracts';
import { listDepsFromEnvironment } from '#lambdas/domain-list/deps';
import { type ListDeps, parseDomainListInput, prepareDomainList } from '#lambdas/domain-list/list';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';

export function createPrepareDomainListHandler(deps: ListDeps): Handler<unknown, PreparedDomainList> {
  return async (event) => prepareDomainList(deps, parseDomainListInput(event));
}

export const handler = createLazyHandler({
  deps: (tools) => listDepsFromEnvironment(process.env, tools),
  handler: createPrepareDomainListHandler,
});

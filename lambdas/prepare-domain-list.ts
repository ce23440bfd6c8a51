/** `PrepareDomainList`: parse the uploaded or scheduled list, write items.json for the Distributed Map. */

import { listDepsFromEnvironment } from '#core/runtime/list-deps';
import type { PreparedDomainList } from '#core/scan/contracts';
import { type ListDeps, parseDomainListInput, prepareDomainList } from '#core/scan/list';

export function createPrepareDomainListHandler(
  deps: ListDeps,
): (event: unknown) => Promise<PreparedDomainList> {
  return async (event) => prepareDomainList(deps, parseDomainListInput(event));
}

let cached: ((event: unknown) => Promise<PreparedDomainList>) | undefined;

export const handler = async (event: unknown): Promise<PreparedDomainList> => {
  cached ??= createPrepareDomainListHandler(listDepsFromEnvironment());
  return cached(event);
};

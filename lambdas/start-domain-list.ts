/** EventBridge target: an uploaded domain list starts one run of the list state machine. */

import { intakeDepsFromEnvironment } from '#core/runtime/list-deps';
import { type IntakeDecision, type IntakeDeps, startDomainListsFromEvent } from '#core/scan/intake';

export function createStartDomainListHandler(
  deps: IntakeDeps,
): (event: unknown) => Promise<IntakeDecision[]> {
  return async (event) => startDomainListsFromEvent(deps, event);
}

let cached: ((event: unknown) => Promise<IntakeDecision[]>) | undefined;

export const handler = async (event: unknown): Promise<IntakeDecision[]> => {
  cached ??= createStartDomainListHandler(intakeDepsFromEnvironment());
  return cached(event);
};

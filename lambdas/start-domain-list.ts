/** EventBridge and Scheduler target: an uploaded list or a schedule fire starts one list run. */

import { intakeDepsFromEnvironment } from '#core/runtime/list-deps';
import { type IntakeDecision, type IntakeDeps, startDomainListRuns } from '#core/scan/intake';

export function createStartDomainListHandler(
  deps: IntakeDeps,
): (event: unknown) => Promise<IntakeDecision[]> {
  return async (event) => startDomainListRuns(deps, event);
}

let cached: ((event: unknown) => Promise<IntakeDecision[]>) | undefined;

export const handler = async (event: unknown): Promise<IntakeDecision[]> => {
  cached ??= createStartDomainListHandler(intakeDepsFromEnvironment());
  return cached(event);
};

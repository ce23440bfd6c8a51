/** EventBridge and Scheduler target: an uploaded list or a schedule fire starts one list run. */

import { intakeDepsFromEnvironment } from '#core/runtime/list-deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { type IntakeDecision, type IntakeDeps, startDomainListRuns } from '#core/workflows/list/intake';

export function createStartDomainListHandler(deps: IntakeDeps): Handler<unknown, IntakeDecision[]> {
  return async (event) => startDomainListRuns(deps, event);
}

export const handler = createLazyHandler({
  deps: (tools) => intakeDepsFromEnvironment(process.env, tools),
  handler: createStartDomainListHandler,
});

/** EventBridge and Scheduler target: an uploaded list or a schedule fire starts one list run. */

import { intakeDepsFromEnvironment } from '#lambdas/domain-list/deps';
import { type IntakeDecision, type IntakeDeps, startRuns } from '#lambdas/platform/runs/intake';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';

export function createStartDomainListHandler(deps: IntakeDeps): Handler<unknown, IntakeDecision[]> {
  return async (event) => startRuns(deps, event);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => intakeDepsFromEnvironment(process.env, tools),
  handler: createStartDomainListHandler,
});

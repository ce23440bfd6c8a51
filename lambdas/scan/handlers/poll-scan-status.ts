/** `PollScanStatus`: `GET /status`, classify, keep the raw status body, compute the next wait and the deadline. */

import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import type { ScanInProgress } from '#lambdas/scan/contracts';
import { type ScanDeps, withLogKeys } from '#lambdas/scan/deps';
import { parseScanInProgress } from '#lambdas/scan/parse';
import { pollScanStatus } from '#lambdas/scan/poll';
import { scanDepsFromEnvironment } from '#lambdas/scan/vendor-deps';

export function createPollScanStatusHandler(deps: ScanDeps): Handler<unknown, ScanInProgress> {
  return async (event, context) => {
    const state = parseScanInProgress(event);
    const scoped = withLogKeys(deps, {
      domain: state.domain,
      scanUuid: state.scanUuid,
      requestId: context?.awsRequestId,
    });
    return pollScanStatus(scoped, state);
  };
}

export const handler = createLazyHandler({
  deps: (tools) => scanDepsFromEnvironment(process.env, tools),
  handler: createPollScanStatusHandler,
});

/** `PollScanStatus`: `GET /status`, classify, keep the raw status body, compute the next wait and the deadline. */
import { scanDepsFromEnvironment } from '#core/runtime/deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import type { ScanInProgress } from '#core/workflows/scan/contracts';
import { type ScanDeps, withLogKeys } from '#core/workflows/scan/deps';
import { parseScanInProgress } from '#core/workflows/scan/parse';
import { pollScanStatus } from '#core/workflows/scan/poll';

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

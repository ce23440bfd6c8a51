/** `PollScanStatus`: `GET /status`, classify, keep the raw status body, compute the next wait and the deadline. */
import { createLazyHandler, type ScanHandler } from '#core/runtime/deps';
import type { ScanInProgress } from '#core/scan/contracts';
import { parseScanInProgress } from '#core/scan/parse';
import { pollScanStatus, type ScanDeps, withLogKeys } from '#core/scan/steps';

export function createPollScanStatusHandler(deps: ScanDeps): ScanHandler<unknown, ScanInProgress> {
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

export const handler = createLazyHandler(createPollScanStatusHandler);

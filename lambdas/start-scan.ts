/** `StartScan`: validate the domain, `POST /scan`, compute the output prefix and the first wait. */
import { createLazyHandler, type ScanHandler } from '#core/runtime/deps';
import type { ScanInProgress } from '#core/scan/contracts';
import { parseScanDomainInput } from '#core/scan/parse';
import { type ScanDeps, startScan, withLogKeys } from '#core/scan/steps';

export function createStartScanHandler(deps: ScanDeps): ScanHandler<unknown, ScanInProgress> {
  return async (event, context) => {
    const input = parseScanDomainInput(event);
    // The raw input may be invalid: log it only once normalised (startScan does), never the event.
    const scoped = withLogKeys(deps, { runId: input.runId, requestId: context?.awsRequestId });
    return startScan(scoped, input);
  };
}

export const handler = createLazyHandler(createStartScanHandler);

/** `FetchReport`, `FetchLogs`, `FetchDebug`: stream one output (`report`/`logs`/`debug`) into S3 with sha256. */
import { createLazyHandler, type ScanHandler } from '#core/runtime/deps';
import type { StoredObject } from '#core/scan/contracts';
import { parseOutputName, parseScanInProgress } from '#core/scan/parse';
import { fetchScanOutput, type ScanDeps, withLogKeys } from '#core/scan/steps';

/** Input: the in-progress state plus `output`, which the Parallel's branch sets. */
export function createFetchScanOutputHandler(deps: ScanDeps): ScanHandler<unknown, StoredObject> {
  return async (event, context) => {
    const state = parseScanInProgress(event);
    const output = parseOutputName(state.output);
    const scoped = withLogKeys(deps, {
      domain: state.domain,
      scanUuid: state.scanUuid,
      output,
      requestId: context?.awsRequestId,
    });
    return fetchScanOutput(scoped, { ...state, output });
  };
}

export const handler = createLazyHandler(createFetchScanOutputHandler);

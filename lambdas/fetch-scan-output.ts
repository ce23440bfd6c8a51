/** `FetchReport`, `FetchLogs`, `FetchDebug`: stream one output (`report`/`logs`/`debug`) into S3 with sha256. */

import { scanDepsFromEnvironment } from '#core/runtime/deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { tracedS3Client } from '#core/runtime/s3-client';
import type { StoredObject } from '#core/workflows/scan/contracts';
import { type ScanDeps, withLogKeys } from '#core/workflows/scan/deps';
import { fetchScanOutput } from '#core/workflows/scan/fetch';
import { parseOutputName, parseScanInProgress } from '#core/workflows/scan/parse';

/** Input: the in-progress state plus `output`, which the Parallel's branch sets. */
export function createFetchScanOutputHandler(deps: ScanDeps): Handler<unknown, StoredObject> {
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

export const handler = createLazyHandler({
  deps: (tools) => scanDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createFetchScanOutputHandler,
});

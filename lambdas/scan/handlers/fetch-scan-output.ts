/** `FetchReport`, `FetchLogs`, `FetchDebug`: stream one output (`report`/`logs`/`debug`) into S3 with sha256. */

import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import type { StoredObject } from '#lambdas/scan/contracts';
import { type ScanDeps, withLogKeys } from '#lambdas/scan/deps';
import { fetchScanOutput } from '#lambdas/scan/fetch';
import { parseOutputName, parseScanInProgress } from '#lambdas/scan/parse';
import { scanDepsFromEnvironment } from '#lambdas/scan/vendor-deps';

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

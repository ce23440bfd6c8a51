/**
 * `RecordFailure`: write `failure.json` and return `{ failure: { error, cause } }`, `cause` being a
 * JSON ScanOutcome, for the Fail state. Accepts any payload: it runs after something already broke,
 * and its own error would hide the real one.
 */

import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { type ScanDeps, storageScanDepsFromEnvironment, withLogKeys } from '#lambdas/scan/deps';
import {
  type RecordScanFailureInput,
  type RecordScanFailureOutput,
  recordScanFailure,
} from '#lambdas/scan/failure';

export function createRecordScanFailureHandler(
  deps: ScanDeps,
): Handler<unknown, RecordScanFailureOutput<RecordScanFailureInput>> {
  return async (event, context) => {
    const state = (event !== null && typeof event === 'object' ? event : {}) as RecordScanFailureInput;
    const scoped = withLogKeys(deps, {
      domain: typeof state.domain === 'string' ? state.domain.slice(0, 253) : undefined,
      scanUuid: typeof state.scanUuid === 'string' ? state.scanUuid.slice(0, 64) : undefined,
      requestId: context?.awsRequestId,
    });
    return recordScanFailure(scoped, state);
  };
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = createLazyHandler({
  deps: (tools) => storageScanDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createRecordScanFailureHandler,
});

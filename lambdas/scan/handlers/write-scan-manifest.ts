/** `WriteManifest`: write `manifest.json` last, once report, logs and debug are stored. */

import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import { type ScanDeps, storageScanDepsFromEnvironment, withLogKeys } from '#lambdas/scan/deps';
import { writeScanManifest } from '#lambdas/scan/manifest';
import { parseScanInProgress, parseStoredObjects } from '#lambdas/scan/parse';

/** Input: the in-progress state with the Parallel's three StoredObject at `stored`. */
export function createWriteScanManifestHandler(deps: ScanDeps): Handler<unknown, ScanOutcome> {
  return async (event, context) => {
    const state = parseScanInProgress(event);
    const stored = parseStoredObjects(state.stored);
    const scoped = withLogKeys(deps, {
      domain: state.domain,
      scanUuid: state.scanUuid,
      requestId: context?.awsRequestId,
    });
    return writeScanManifest(scoped, { ...state, stored });
  };
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = createLazyHandler({
  deps: (tools) => storageScanDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createWriteScanManifestHandler,
});

/** `WriteManifest`: write `manifest.json` last, once report, logs and debug are stored. */

import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { tracedS3Client } from '#core/runtime/s3-client';
import { storageScanDepsFromEnvironment } from '#core/runtime/scan-deps';
import type { ScanOutcome } from '#core/workflows/scan/contracts';
import { type ScanDeps, withLogKeys } from '#core/workflows/scan/deps';
import { writeScanManifest } from '#core/workflows/scan/manifest';
import { parseScanInProgress, parseStoredObjects } from '#core/workflows/scan/parse';

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

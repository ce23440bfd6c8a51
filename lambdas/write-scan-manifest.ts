/** `WriteManifest`: write `manifest.json` last, once report, logs and debug are stored. */
import { createLazyHandler, type ScanHandler, storageScanDepsFromEnvironment } from '#core/runtime/handler';
import type { ScanOutcome } from '#core/scan/contracts';
import { parseScanInProgress, parseStoredObjects } from '#core/scan/parse';
import { type ScanDeps, withLogKeys, writeScanManifest } from '#core/scan/steps';

/** Input: the in-progress state with the Parallel's three StoredObject at `stored`. */
export function createWriteScanManifestHandler(deps: ScanDeps): ScanHandler<unknown, ScanOutcome> {
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
export const handler = createLazyHandler(createWriteScanManifestHandler, () =>
  storageScanDepsFromEnvironment(process.env),
);

/** `WriteBreachManifest`: the run's manifest, listing its recon, its archive and its objects. */
import { breachStorageDepsFromEnvironment } from '#core/runtime/breach-deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { tracedS3Client } from '#core/runtime/s3-client';
import type { BreachDeps } from '#core/workflows/breach/deps';
import { type BreachRunResult, writeBreachManifest } from '#core/workflows/breach/records';

export function createWriteBreachManifestHandler(deps: BreachDeps): Handler<unknown, BreachRunResult> {
  return async (event) => writeBreachManifest(deps, event);
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = createLazyHandler({
  deps: (tools) => breachStorageDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createWriteBreachManifestHandler,
});

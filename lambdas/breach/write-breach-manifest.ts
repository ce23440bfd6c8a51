/** `WriteBreachManifest`: the run's manifest, listing its recon, its archive and its objects. */

import { type BreachDeps, breachStorageDepsFromEnvironment } from '#lambdas/breach/deps';
import { type BreachRunResult, writeBreachManifest } from '#lambdas/breach/records';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';

export function createWriteBreachManifestHandler(deps: BreachDeps): Handler<unknown, BreachRunResult> {
  return async (event) => writeBreachManifest(deps, event);
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => breachStorageDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createWriteBreachManifestHandler,
});

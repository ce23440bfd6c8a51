/** `Recon`: read the person's request, `POST /recon` at most once, record recon.json. */

import type { ReconOutput } from '#lambdas/breach/contracts';
import type { BreachDeps } from '#lambdas/breach/deps';
import { recon } from '#lambdas/breach/recon';
import { breachDepsFromEnvironment } from '#lambdas/breach/vendor-deps';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';

export function createBreachReconHandler(deps: BreachDeps): Handler<unknown, ReconOutput> {
  return async (event) => recon(deps, event);
}

export const handler = createLazyHandler({
  deps: (tools) => breachDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createBreachReconHandler,
});

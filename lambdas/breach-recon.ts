/** `Recon`: read the person's request, `POST /recon` at most once, record recon.json. */
import { breachDepsFromEnvironment } from '#core/runtime/breach-vendor-deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { tracedS3Client } from '#core/runtime/s3-client';
import type { ReconOutput } from '#core/workflows/breach/contracts';
import type { BreachDeps } from '#core/workflows/breach/deps';
import { recon } from '#core/workflows/breach/recon';

export function createBreachReconHandler(deps: BreachDeps): Handler<unknown, ReconOutput> {
  return async (event) => recon(deps, event);
}

export const handler = createLazyHandler({
  deps: (tools) => breachDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createBreachReconHandler,
});

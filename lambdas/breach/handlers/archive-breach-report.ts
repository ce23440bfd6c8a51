/** `ArchiveReport`: stream the report's ZIP into S3, verify it, promote it, write its manifest. */

import { archiveRunReport } from '#lambdas/breach/archive';
import type { ArchiveOutput } from '#lambdas/breach/contracts';
import type { BreachDeps } from '#lambdas/breach/deps';
import { breachDepsFromEnvironment } from '#lambdas/breach/vendor-deps';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';

export function createArchiveBreachReportHandler(deps: BreachDeps): Handler<unknown, ArchiveOutput> {
  return async (event) => archiveRunReport(deps, event);
}

export const handler = createLazyHandler({
  deps: (tools) => breachDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createArchiveBreachReportHandler,
});

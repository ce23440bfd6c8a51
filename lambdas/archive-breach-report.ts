/** `ArchiveReport`: stream the report's ZIP into S3, verify it, promote it, write its manifest. */
import { breachDepsFromEnvironment } from '#core/runtime/breach-vendor-deps';
import { createLazyHandler, type Handler } from '#core/runtime/observability';
import { tracedS3Client } from '#core/runtime/s3-client';
import { archiveRunReport } from '#core/workflows/breach/archive';
import type { ArchiveOutput } from '#core/workflows/breach/contracts';
import type { BreachDeps } from '#core/workflows/breach/deps';

export function createArchiveBreachReportHandler(deps: BreachDeps): Handler<unknown, ArchiveOutput> {
  return async (event) => archiveRunReport(deps, event);
}

export const handler = createLazyHandler({
  deps: (tools) => breachDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createArchiveBreachReportHandler,
});

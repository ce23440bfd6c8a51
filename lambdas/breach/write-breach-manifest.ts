/**
 * `WriteBreachManifest`: the last step of a run that archived its report. The manifest lists the
 * run's recon, its archive and every object under the run's prefix,
 * `breach/people/<slug>-<hash>/<requestId>/`, next to recon.json.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { type ArchiveOutput, archiveOutputSchema } from '#lambdas/breach/contracts';
import { type BreachDeps, breachStorageDepsFromEnvironment } from '#lambdas/breach/deps';
import { parseWith } from '#lambdas/platform/input/schema';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { putJson } from '#lambdas/platform/s3/json-objects';

export const RUN_MANIFEST_FILE = 'manifest.json';

/** The run's manifest: its recon, its archive, and every object under its prefix. */
export interface BreachRunManifest {
  readonly schemaVersion: 1;
  readonly requestId: string;
  readonly person: ArchiveOutput['person'];
  readonly outcome: 'archived';
  readonly recon: ArchiveOutput['recon'];
  readonly archive: ArchiveOutput['archive'];
  readonly objects: readonly string[];
  readonly writtenAt: string;
}

export interface BreachRunResult {
  readonly outcome: 'archived';
  readonly manifestKey: string;
  readonly reportName: string | undefined;
  readonly totalBreaches: number | undefined;
  readonly archiveKey: string;
}

export async function writeBreachManifest(deps: BreachDeps, event: unknown): Promise<BreachRunResult> {
  const state = parseWith(archiveOutputSchema, event);
  const manifestKey = `${state.outputPrefix}${RUN_MANIFEST_FILE}`;
  const listed = await deps.s3.send(
    new ListObjectsV2Command({ Bucket: deps.settings.resultsBucket, Prefix: state.outputPrefix }),
  );
  const objects = (listed.Contents ?? [])
    .map((object) => object.Key)
    .filter((key): key is string => key !== undefined && key !== manifestKey)
    .sort();
  const manifest: BreachRunManifest = {
    schemaVersion: 1,
    requestId: state.requestId,
    person: state.person,
    outcome: 'archived',
    recon: state.recon,
    archive: state.archive,
    objects,
    writtenAt: deps.clock().toISOString(),
  };
  await putJson(deps, manifestKey, manifest, 2);
  deps.logger.info('Breach run manifest written', { personId: state.person.id, manifestKey });
  return {
    outcome: 'archived',
    manifestKey,
    reportName: state.recon.reportName,
    totalBreaches: state.recon.totalBreaches,
    archiveKey: state.archive.key,
  };
}

export function createWriteBreachManifestHandler(deps: BreachDeps): Handler<unknown, BreachRunResult> {
  return async (event) => writeBreachManifest(deps, event);
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => breachStorageDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createWriteBreachManifestHandler,
});

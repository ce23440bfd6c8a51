/**
 * The last steps of a breach run: WriteBreachManifest (a run that archived its report) and
 * RecordBreachFailure (a run that did not). Both write under the run's prefix,
 * `breach/people/<slug>-<hash>/<requestId>/`, next to recon.json.
 */
import { createHash } from 'node:crypto';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { cleanMessage, cleanName, describeCaught, safe } from '#lambdas/platform/caught';
import { putJson } from '#lambdas/platform/s3/json-objects';
import { parseWith } from '#lambdas/platform/schema';
import {
  type ArchiveOutput,
  archiveOutputSchema,
  BREACH_PREFIX,
  breachReportInputSchema,
  personRefSchema,
} from './contracts.ts';
import type { BreachDeps } from './deps.ts';
import { breachRunPrefix } from './identity.ts';

export const RUN_MANIFEST_FILE = 'manifest.json';
export const FAILURE_FILE = 'failure.json';

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

/** What the Mark* Pass states of the breach workflow put in `$.failure.error`. */
export type BreachFailureName = 'ReconFailed' | 'ArchiveFailed' | 'ManifestFailed';

export interface BreachFailureRecord {
  readonly schemaVersion: 1;
  readonly failure: string;
  readonly error: { readonly name: string; readonly message: string };
  readonly requestId: string | null;
  readonly person: ArchiveOutput['person'] | null;
  readonly reconKey: string | null;
  readonly recordedAt: string;
}

export interface RecordedBreachFailure {
  readonly failure: { readonly error: string; readonly cause: string };
  readonly failureKey: string | undefined;
}

/**
 * Writes failure.json and returns `{ failure: { error, cause } }` for the Fail state. Accepts any
 * payload, since it runs after something broke, and never throws: a failed write is logged and
 * reported as `failureKey: undefined`, so the real error still reaches the execution history.
 */
export async function recordBreachFailure(deps: BreachDeps, event: unknown): Promise<RecordedBreachFailure> {
  const fields = (event !== null && typeof event === 'object' ? event : {}) as Record<string, unknown>;
  const failureName = failureNameOf(fields.failure);
  const error = describeCaught(fields.caught) ?? {
    name: failureName,
    message: 'the workflow recorded a failure without a caught error',
  };
  const input = safe(() => parseWith(breachReportInputSchema, event));
  const person = input?.person ?? safe(() => parseWith(personRefSchema, fields.person)) ?? null;
  const recordedAt = deps.clock();
  const reconKey =
    typeof (fields.recon as { reconKey?: unknown } | undefined)?.reconKey === 'string'
      ? cleanMessage((fields.recon as { reconKey: string }).reconKey)
      : null;
  const record: BreachFailureRecord = {
    schemaVersion: 1,
    failure: failureName,
    error,
    requestId: input?.requestId ?? null,
    person,
    reconKey,
    recordedAt: recordedAt.toISOString(),
  };
  // Without a valid person and request there is no run prefix: a dated key named by the payload's hash.
  const key = input
    ? `${breachRunPrefix(input.person, input.requestId)}${FAILURE_FILE}`
    : `${BREACH_PREFIX}rejected/${recordedAt.toISOString().slice(0, 10)}/${createHash('sha256')
        .update(JSON.stringify([failureName, error.name, error.message]))
        .digest('hex')
        .slice(0, 16)}/${FAILURE_FILE}`;
  let failureKey: string | undefined;
  try {
    await putJson(deps, key, record, 2);
    failureKey = key;
  } catch (writeError) {
    deps.logger.error('Could not write the breach failure record', {
      key,
      error: cleanName((writeError as Error)?.name ?? 'UnknownError'),
    });
  }
  deps.logger.warn('Breach run failed', { failure: failureName, error: error.name, failureKey });
  return {
    failure: { error: failureName, cause: JSON.stringify({ ...error, failureKey: failureKey ?? null }) },
    failureKey,
  };
}

function failureNameOf(failure: unknown): string {
  const error =
    failure !== null && typeof failure === 'object' ? (failure as { error?: unknown }).error : undefined;
  return typeof error === 'string' && error.trim() !== '' ? cleanName(error) : 'BreachFailed';
}

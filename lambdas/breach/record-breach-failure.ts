/**
 * `RecordBreachFailure`: the last step of a run that did not archive its report. It writes
 * failure.json under the run's prefix, `breach/people/<slug>-<hash>/<requestId>/`, next to
 * recon.json, and returns `{ failure: { error, cause } }` for the Fail state.
 */
import { createHash } from 'node:crypto';
import {
  type ArchiveOutput,
  BREACH_PREFIX,
  breachReportInputSchema,
  personRefSchema,
} from '#lambdas/breach/contracts';
import { type BreachDeps, breachStorageDepsFromEnvironment } from '#lambdas/breach/deps';
import { breachRunPrefix } from '#lambdas/breach/identity';
import { parseWith } from '#lambdas/platform/input/schema';
import { cleanMessage, cleanName, describeCaught, safe } from '#lambdas/platform/redaction/caught';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { putJson } from '#lambdas/platform/s3/json-objects';

export const FAILURE_FILE = 'failure.json';

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

export function createRecordBreachFailureHandler(deps: BreachDeps): Handler<unknown, RecordedBreachFailure> {
  return async (event) => recordBreachFailure(deps, event);
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => breachStorageDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createRecordBreachFailureHandler,
});

/**
 * RecordFailure: the last task before the Fail state. It turns whatever went wrong into a ScanOutcome
 * (the Fail state's Cause, which the list workflow parses), and writes failure.json next to the
 * scan's outputs.
 *
 * It must not fail itself: a throw here would replace the scan's real error with this task's. So it
 * accepts any payload (malformed `caught`, missing fields), and a failed S3 write is logged and
 * reported as `failureKey: undefined` rather than thrown: the outcome still reaches the Fail state and
 * the execution history, and the error log line feeds the alarms.
 */
import { createHash } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { jsonText } from '#lambdas/platform/input/text-encoding';
import { ALREADY_ACCEPTED, normalizeDomain, validateUuid } from '#lambdas/platform/input/validation';
import { cleanMessage, cleanName, cleanText, describeCaught, safe } from '#lambdas/platform/redaction/caught';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { SCAN_METRIC } from '#lambdas/registry';
import type { PollState, ScanInProgress, ScanOutcome, StatusSnapshot } from '#lambdas/scan/contracts';
import { type ScanDeps, storageScanDepsFromEnvironment, withLogKeys } from '#lambdas/scan/deps';
import { parseOutputPrefix, parsePollState, parseStatusSnapshot } from '#lambdas/scan/parse';

export const FAILURE_FILE = 'failure.json';

/** What the Mark* Pass states put in `$.failure.error`. */
export type FailureName =
  | 'ScanFailed'
  | 'ScanTimedOut'
  | 'ScanRejected'
  | 'PollFailed'
  | 'OutputFetchFailed'
  | 'ManifestFailed';

/** Keyed by FailureName; any other name (a hand-made input) counts as 'failed'. */
export const OUTCOME_STATE: Readonly<Record<string, ScanOutcome['state']>> = {
  ScanFailed: 'failed',
  ScanTimedOut: 'timed_out',
  ScanRejected: 'rejected',
  PollFailed: 'failed',
  OutputFetchFailed: 'failed',
  ManifestFailed: 'failed',
};

export interface RecordScanFailureInput extends Partial<ScanInProgress> {
  readonly domain: string;
  readonly failure: { readonly error: string };
  /** What a Catch put at `$.caught`: the error name and its cause. */
  readonly caught?: { readonly Error: string; readonly Cause: string };
}

export interface RecordedFailure {
  /** The Fail state's Error (ErrorPath $.failure.error). */
  readonly error: string;
  /** The Fail state's Cause: a JSON ScanOutcome. */
  readonly cause: string;
}

export type RecordScanFailureOutput<T> = T & {
  readonly failure: RecordedFailure;
  /** Where failure.json went; undefined when it could not be written (see the log). */
  readonly failureKey: string | undefined;
};

export interface FailureRecord {
  readonly schemaVersion: 1;
  readonly failure: string;
  readonly outcome: ScanOutcome;
  readonly runId: string | null;
  readonly recordedAt: string;
  readonly status: StatusSnapshot | null;
  readonly poll: PollState | null;
}

export async function recordScanFailure<T extends RecordScanFailureInput>(
  deps: ScanDeps,
  state: T,
): Promise<RecordScanFailureOutput<T>> {
  // Typed as T for callers, read as unknown here: the payload may be anything a Catch produced.
  const fields = (state !== null && typeof state === 'object' ? state : {}) as Record<string, unknown>;
  const failureName = failureNameOf(fields.failure);
  const domainInput = typeof fields.domain === 'string' ? cleanText(fields.domain, 300) : '';
  const domain = safe(() => normalizeDomain(domainInput, 'domain', ALREADY_ACCEPTED));
  const scanUuid =
    typeof fields.scanUuid === 'string'
      ? safe(() => validateUuid(fields.scanUuid as string, 'scan_uuid'))
      : undefined;
  const outputPrefix =
    domain !== undefined && scanUuid !== undefined
      ? safe(() => parseOutputPrefix(fields.outputPrefix, domain, scanUuid))
      : undefined;
  const status = safe(() => parseStatusSnapshot(fields.status));
  const poll = safe(() => parsePollState(fields.poll));
  const runId = typeof fields.runId === 'string' ? cleanText(fields.runId, 128) : undefined;

  const error =
    describeCaught(fields.caught) ??
    describeWithoutCatch(failureName, scanUuid, status, poll, deps.settings.poll.deadlineSeconds);
  const outcome: ScanOutcome = {
    domain: domain ?? domainInput,
    state: OUTCOME_STATE[failureName] ?? 'failed',
    scanUuid,
    outputPrefix,
    manifestKey: undefined,
    error,
    ...(fields.settledStart === 'adopted' || fields.settledStart === 'retried'
      ? { settledStart: fields.settledStart }
      : {}),
  };
  const recordedAt = deps.clock();
  const key =
    outputPrefix !== undefined
      ? `${outputPrefix}${FAILURE_FILE}`
      : rejectedFailureKey(domain, recordedAt, [
          runId ?? '',
          domainInput,
          failureName,
          error.name,
          error.message,
        ]);
  const record: FailureRecord = {
    schemaVersion: 1,
    failure: failureName,
    outcome,
    runId: runId ?? null,
    recordedAt: recordedAt.toISOString(),
    status: status ?? null,
    poll: poll ?? null,
  };

  let failureKey: string | undefined;
  try {
    await deps.s3.send(
      new PutObjectCommand({
        Bucket: deps.settings.resultsBucket,
        Key: key,
        Body: `${jsonText(record, 2)}\n`,
        ContentType: 'application/json',
        Metadata: { ...(domain ? { domain } : {}), ...(scanUuid ? { 'scan-uuid': scanUuid } : {}) },
      }),
    );
    failureKey = key;
  } catch (writeError) {
    deps.logger.error('Could not write the failure record', {
      domain: outcome.domain,
      scanUuid,
      key,
      errorName: writeError instanceof Error ? writeError.name : typeof writeError,
    });
  }
  recordFailureMetrics(deps, failureName, poll, recordedAt);
  deps.logger.warn('Scan failed', {
    domain: outcome.domain,
    scanUuid,
    failure: failureName,
    outcomeState: outcome.state,
    errorName: error.name,
    errorMessage: error.message,
    failureKey,
  });
  return { ...state, failure: { error: failureName, cause: JSON.stringify(outcome) }, failureKey };
}

/**
 * A timed-out scan counts as timed out, anything else as failed (its failure name is the outcome
 * dimension: a word from a fixed set). The duration is known once the scan had started.
 */
function recordFailureMetrics(
  deps: ScanDeps,
  failureName: string,
  poll: PollState | undefined,
  now: Date,
): void {
  const timedOut = failureName === 'ScanTimedOut';
  deps.metrics.record(timedOut ? SCAN_METRIC.scansTimedOut : SCAN_METRIC.scansFailed, 1, 'Count', {
    workflow: 'scan',
    // A hand-started execution may name anything: only the known names become a dimension.
    outcome: Object.hasOwn(OUTCOME_STATE, failureName) ? failureName : 'Other',
  });
  const started = poll === undefined ? Number.NaN : Date.parse(poll.startedAt);
  if (Number.isFinite(started)) {
    deps.metrics.record(SCAN_METRIC.scanDuration, Math.max(0, (now.getTime() - started) / 1000), 'Seconds', {
      workflow: 'scan',
      outcome: timedOut ? 'timed_out' : 'failed',
    });
  }
}

function describeWithoutCatch(
  failureName: string,
  scanUuid: string | undefined,
  status: StatusSnapshot | undefined,
  poll: PollState | undefined,
  deadlineSeconds: number,
): { name: string; message: string } {
  const scan = scanUuid ? `scan ${scanUuid}` : 'the scan';
  const word = status?.vendorStatus ?? status?.state;
  switch (failureName) {
    case 'ScanFailed':
      return {
        name: 'ScanFailed',
        message: cleanMessage(`The vendor reported ${scan} as failed${word ? ` (status "${word}")` : ''}`),
      };
    case 'ScanTimedOut':
      return {
        name: 'ScanTimedOut',
        message: cleanMessage(
          `${capitalise(scan)} did not finish within ${deadlineSeconds} s` +
            (poll ? ` (${poll.attempt} polls, ${poll.waitedSeconds} s of waits)` : '') +
            (word ? `; last status "${word}"` : ''),
        ),
      };
    default:
      return { name: cleanName(failureName), message: `${failureName} without error details` };
  }
}

function failureNameOf(failure: unknown): string {
  const error =
    failure !== null && typeof failure === 'object' ? (failure as { error?: unknown }).error : undefined;
  if (typeof error === 'string' && error.trim() !== '') return cleanName(error);
  return 'ScanFailed';
}

/**
 * `scans/<domain or invalid>/<yyyy>/<mm>/<dd>/rejected-<hash>/failure.json` for a scan that never got
 * a uuid. The hash covers run id, input and error: a retried RecordFailure rewrites the same record,
 * while a different rejection of the same input gets its own key instead of overwriting.
 */
function rejectedFailureKey(domain: string | undefined, at: Date, identity: readonly string[]): string {
  const hash = createHash('sha256').update(JSON.stringify(identity), 'utf8').digest('hex').slice(0, 16);
  const date = Number.isNaN(at.getTime()) ? new Date(0) : at;
  const yyyy = String(date.getUTCFullYear()).padStart(4, '0');
  const mm = String(date.getUTCMonth() + 1).padStart(2, '0');
  const dd = String(date.getUTCDate()).padStart(2, '0');
  return `scans/${domain ?? 'invalid'}/${yyyy}/${mm}/${dd}/rejected-${hash}/${FAILURE_FILE}`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * `RecordFailure`: write `failure.json` and return `{ failure: { error, cause } }`, `cause` being a
 * JSON ScanOutcome, for the Fail state. Accepts any payload: it runs after something already broke,
 * and its own error would hide the real one.
 */
export function createRecordScanFailureHandler(
  deps: ScanDeps,
): Handler<unknown, RecordScanFailureOutput<RecordScanFailureInput>> {
  return async (event, context) => {
    const state = (event !== null && typeof event === 'object' ? event : {}) as RecordScanFailureInput;
    const scoped = withLogKeys(deps, {
      domain: typeof state.domain === 'string' ? state.domain.slice(0, 253) : undefined,
      scanUuid: typeof state.scanUuid === 'string' ? state.scanUuid.slice(0, 64) : undefined,
      requestId: context?.awsRequestId,
    });
    return recordScanFailure(scoped, state);
  };
}

// Writes S3 only: no vendor URL and no secret in this function's environment.
export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => storageScanDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createRecordScanFailureHandler,
});

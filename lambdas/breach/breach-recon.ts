/**
 * Recon: read the person's request, `POST /recon` at most once per request, and record the answer
 * in `recon.json` under the run's prefix before anything else can fail.
 *
 * `POST /recon` is not idempotent: each call makes a report. A claim object is written before the
 * call and removed only when the call provably did nothing (it never left this process, or the
 * vendor refused it with 429, 401/403 or another 4xx). An attempt that meets a claim without a
 * recon.json therefore knows an earlier call may have made a report, and stops with
 * ReconOutcomeUnknownError instead of making a second one.
 */
import { createHash } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import {
  type BreachReportInput,
  breachReportInputSchema,
  parseBreachRequest,
  RECON_STATUSES,
  type ReconOutput,
  type ReconStatus,
  type ReconThrottled,
  reconSummarySchema,
} from '#lambdas/breach/contracts';
import type { BreachDeps } from '#lambdas/breach/deps';
import { ReconOutcomeUnknownError, ReconThrottledError } from '#lambdas/breach/errors';
import { breachRunPrefix, reportNameObjectKey } from '#lambdas/breach/identity';
import { breachDepsFromEnvironment } from '#lambdas/breach/vendor-deps';
import {
  InvalidInputError,
  ReportNameRefusedError,
  VendorAuthError,
  VendorHttpError,
  VendorNetworkError,
  VendorResponseError,
  VendorThrottledError,
  VendorUnavailableError,
} from '#lambdas/platform/errors';
import { parseWith } from '#lambdas/platform/input/schema';
import {
  fingerprintOf,
  holdsSecret,
  redactDeep,
  redactText,
  rememberAddresses,
} from '#lambdas/platform/redaction/redact';
import {
  DEFAULT_THROTTLE_WAIT,
  nextThrottleWait,
  parseThrottleWait,
  type ThrottleWaitState,
} from '#lambdas/platform/runs/throttle-wait';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { getJsonIfExists, headIfExists, putJson } from '#lambdas/platform/s3/json-objects';
import { BREACH_METRIC } from '#lambdas/registry';

export const RECON_FILE = 'recon.json';
const CLAIM_FILE = '.recon-claim';
/** A request object larger than this is not a person's name and addresses. */
const MAX_REQUEST_BYTES = 64 * 1024;

/**
 * recon.json: the vendor's whole answer, redacted (`redactDeep`: an answer may echo an address),
 * with the timings and who it was about (hashed).
 */
export interface ReconRecord {
  readonly schemaVersion: 1;
  readonly requestId: string;
  readonly person: BreachReportInput['person'];
  readonly emailCount: number;
  readonly status: string;
  /** The report name, redacted. */
  readonly output: string | null;
  /** Where the exact report name is kept when redaction changed it (see `reportNameObjectKey`). */
  readonly reportNameKey?: string | null;
  /**
   * The fingerprint of a report name that holds a key (`holdsSecret`): the report is refused, its
   * exact name kept nowhere, and every retry of the run fails with ReportNameRefusedError again.
   */
  readonly reportNameRefused?: string;
  readonly total_breaches: number | null;
  readonly timings: {
    readonly requestedAt: string;
    readonly answeredAt: string;
    readonly durationMs: number;
  };
  readonly raw: unknown;
}

export async function recon(deps: BreachDeps, event: unknown): Promise<ReconOutput> {
  const input = parseWith(breachReportInputSchema, event);
  const outputPrefix = breachRunPrefix(input.person, input.requestId);
  const reconKey = `${outputPrefix}${RECON_FILE}`;
  const claimKey = `${outputPrefix}${CLAIM_FILE}`;

  // A retried or redriven task: the answer is already recorded, and the vendor is not asked again.
  const recorded = await getJsonIfExists(deps, reconKey);
  if (recorded !== undefined) {
    deps.logger.info('Recon already recorded; not sent again', { personId: input.person.id, reconKey });
    return { ...input, outputPrefix, recon: summaryOf(deps, recorded as ReconRecord, reconKey) };
  }
  if ((await headIfExists(deps, claimKey)) !== undefined) throw new ReconOutcomeUnknownError(claimKey);

  const request = parseBreachRequest(await readRequest(deps, input), { maxEmails: deps.settings.maxEmails });
  // The vendor may echo these in any form, in any field: every text below is redacted against them.
  rememberAddresses(request.emails);
  await deps.s3.send(
    new PutObjectCommand({
      Bucket: deps.settings.resultsBucket,
      Key: claimKey,
      Body: JSON.stringify({ requestId: input.requestId, claimedAt: deps.clock().toISOString() }),
      ContentType: 'application/json',
      // Atomic where S3 supports conditional writes: two racing attempts cannot both claim.
      IfNoneMatch: '*',
    }),
  );

  const requestedAt = deps.clock();
  let answer: Awaited<ReturnType<BreachDeps['breachClient']['recon']>>;
  try {
    answer = await deps.breachClient.recon(request);
  } catch (error) {
    if (provesNothingWasProcessed(error)) {
      await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.settings.resultsBucket, Key: claimKey }));
    } else if (error instanceof VendorResponseError) {
      // A 2xx answer that could not be read (not JSON, too deep, no status): the vendor did make
      // a report. recon.json records that, so a re-run is answered from it and never asks again,
      // and the claim is released; reconciliation archives the report from the vendor's list.
      await recordUnreadableAnswer(deps, input, request.emails.length, reconKey, requestedAt, error);
      await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.settings.resultsBucket, Key: claimKey }));
    }
    throw error;
  }
  const answeredAt = deps.clock();
  const output = answer.output === undefined ? null : redactText(answer.output);
  // A name that holds a key is refused outright: kept exact it would store the key, and redacted
  // it could not be downloaded. Only its fingerprint is recorded.
  const refused =
    answer.output !== undefined && holdsSecret(answer.output) ? fingerprintOf(answer.output) : undefined;
  // The exact name is needed to download the report; when it holds an address it is kept apart,
  // with the request, before recon.json can point at it.
  let reportNameKey: string | null = null;
  if (answer.output !== undefined && output !== answer.output && refused === undefined) {
    reportNameKey = reportNameObjectKey(input, deps.settings.resultsBucket);
    // With the addresses: ArchiveReport, in a function of its own, redacts its texts against them.
    await putJson(deps, reportNameKey, { reportName: answer.output, addresses: request.emails }, 2);
  }
  const record: ReconRecord = {
    schemaVersion: 1,
    requestId: input.requestId,
    person: input.person,
    emailCount: request.emails.length,
    status: redactText(answer.status),
    output,
    reportNameKey,
    ...(refused === undefined ? {} : { reportNameRefused: refused }),
    total_breaches: answer.totalBreaches ?? null,
    timings: {
      requestedAt: requestedAt.toISOString(),
      answeredAt: answeredAt.toISOString(),
      durationMs: answeredAt.getTime() - requestedAt.getTime(),
    },
    raw: redactDeep(answer.raw),
  };
  // Stored whatever it says: an answer we cannot route on is still the only trace of a report.
  await putJson(deps, reconKey, record, 2);
  // recon.json now answers any re-run; the claim has done its job and would only be an orphan.
  await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.settings.resultsBucket, Key: claimKey }));
  const summary = summaryOf(deps, record, reconKey);
  deps.metrics.record(BREACH_METRIC.breachReports, 1, 'Count', {
    workflow: 'breach',
    outcome: summary.status,
  });
  deps.logger.info('Recon recorded', {
    personId: input.person.id,
    requestId: input.requestId,
    status: summary.status,
    totalBreaches: summary.totalBreaches,
    durationMs: record.timings.durationMs,
  });
  return { ...input, outputPrefix, recon: summary };
}

/**
 * The Recon step: `recon`, or, when the vendor throttled the request (its claim already released: a
 * 429 proves no report was made), the wait the state machine makes before Recon runs again, the
 * vendor's Retry-After plus jitter, never sooner; past the rounds or the total wait,
 * ReconThrottledError.
 */
export async function reconOrWait(deps: BreachDeps, event: unknown): Promise<ReconOutput | ReconThrottled> {
  // The throttle record is this step's own bookkeeping: only the wait carries it back here.
  const { reconThrottle, ...input } = parseWith(breachReportInputSchema, event);
  const previous = parseThrottleWait(reconThrottle, 'reconThrottle');
  try {
    return await recon(deps, input);
  } catch (error) {
    if (!(error instanceof VendorThrottledError)) throw error;
    return waitForSlot(deps, input, previous, error);
  }
}

function waitForSlot(
  deps: BreachDeps,
  input: Omit<BreachReportInput, 'reconThrottle'>,
  previous: ThrottleWaitState | undefined,
  error: VendorThrottledError,
): ReconThrottled {
  const decision = nextThrottleWait(
    previous,
    error.retryAfterMs,
    deps.random ?? Math.random,
    deps.reconThrottle ?? DEFAULT_THROTTLE_WAIT,
    'report requests',
  );
  if (decision.kind === 'give-up') {
    deps.logger.warn('Recon throttled for too long: recorded as failed', {
      personId: input.person.id,
      requestId: input.requestId,
      reason: decision.reason,
    });
    throw new ReconThrottledError(decision.reason, { cause: error });
  }
  deps.logger.info('Recon throttled: the state machine waits, then requests again', {
    personId: input.person.id,
    requestId: input.requestId,
    ...decision.state,
  });
  return { ...input, reconThrottle: decision.state };
}

/**
 * The routing facts of a recon record; an answer the workflow cannot act on is the vendor's fault.
 * The vendor's `output` goes into the payload only up to `maxInlineValueBytes`: a larger one stays
 * in recon.json and the payload names it (`outputRef`), so no answer can push the state past Step
 * Functions' payload limit.
 */
function summaryOf(deps: BreachDeps, record: ReconRecord, reconKey: string): ReconOutput['recon'] {
  const operation = 'breach.recon';
  if (!(RECON_STATUSES as readonly string[]).includes(record.status)) {
    throw new VendorResponseError(
      operation,
      `status must be ${RECON_STATUSES.join(' or ')}; the answer is kept in ${reconKey}`,
    );
  }
  const status = record.status as ReconStatus;
  if (record.reportNameRefused !== undefined) {
    deps.logger.warn('Report name refused: it holds a key', {
      reportName: record.reportNameRefused,
      reconKey,
    });
    throw new ReportNameRefusedError(operation, record.reportNameRefused);
  }
  if (status === 'success' && (record.output === null || record.output === '')) {
    throw new VendorResponseError(
      operation,
      `success without a report name; the answer is kept in ${reconKey}`,
    );
  }
  const output = status === 'success' ? record.output : null;
  const bytes = output === null ? 0 : Buffer.byteLength(output, 'utf8');
  const inline = bytes <= deps.settings.limits.maxInlineValueBytes;
  return parseWith(
    reconSummarySchema,
    {
      status,
      ...(output !== null && inline ? { reportName: output } : {}),
      ...(output !== null && !inline
        ? {
            outputRef: {
              bucket: deps.settings.resultsBucket,
              key: reconKey,
              field: 'output',
              bytes,
              sha256: createHash('sha256').update(output, 'utf8').digest('hex'),
            },
          }
        : {}),
      ...(status === 'success' && record.reportNameKey ? { reportNameKey: record.reportNameKey } : {}),
      ...(record.total_breaches === null ? {} : { totalBreaches: record.total_breaches }),
      reconKey,
    },
    'recon',
  );
}

async function readRequest(deps: BreachDeps, input: BreachReportInput): Promise<unknown> {
  const { bucket, key, versionId, range } = input.request;
  if (range && range.end - range.start + 1 > MAX_REQUEST_BYTES) {
    throw new InvalidInputError('request.range', `is larger than ${MAX_REQUEST_BYTES} bytes`);
  }
  const object = await deps.s3.send(
    new GetObjectCommand({
      Bucket: bucket,
      Key: key,
      ...(versionId ? { VersionId: versionId } : {}),
      // One person's line of a shard: the other people's addresses are never read.
      ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
    }),
  );
  if ((object.ContentLength ?? 0) > MAX_REQUEST_BYTES) {
    object.Body?.transformToWebStream().cancel();
    throw new InvalidInputError('request', `object is larger than ${MAX_REQUEST_BYTES} bytes`);
  }
  if (range && object.ContentLength !== range.end - range.start + 1) {
    object.Body?.transformToWebStream().cancel();
    throw new InvalidInputError('request.range', 'lies outside the stored object');
  }
  const text = (await object.Body?.transformToString('utf-8')) ?? '';
  try {
    return JSON.parse(text);
  } catch {
    // The parser's message would quote the text, which holds addresses.
    throw new InvalidInputError('request', 'object is not valid JSON');
  }
}

/**
 * Errors after which the vendor provably made no report: the request never left, or the vendor
 * refused it before doing anything (throttled, key refused, bad request). A timeout, a reset or a
 * 5xx after the request was sent proves nothing.
 */
/** Status word of a recon.json whose answer could not be read; the workflow cannot route on it. */
const UNREADABLE_STATUS = 'unreadable';

async function recordUnreadableAnswer(
  deps: BreachDeps,
  input: BreachReportInput,
  emailCount: number,
  reconKey: string,
  requestedAt: Date,
  error: VendorResponseError,
): Promise<void> {
  const answeredAt = deps.clock();
  const record: ReconRecord = {
    schemaVersion: 1,
    requestId: input.requestId,
    person: input.person,
    emailCount,
    status: UNREADABLE_STATUS,
    output: null,
    reportNameKey: null,
    total_breaches: null,
    timings: {
      requestedAt: requestedAt.toISOString(),
      answeredAt: answeredAt.toISOString(),
      durationMs: answeredAt.getTime() - requestedAt.getTime(),
    },
    // Why, never the body itself: it is what could not be read.
    raw: { error: error.name, message: redactText(error.message) },
  };
  await putJson(deps, reconKey, record, 2);
}

function provesNothingWasProcessed(error: unknown): boolean {
  if (error instanceof InvalidInputError) return true;
  if (error instanceof VendorNetworkError) return error.requestNotSent;
  if (error instanceof VendorThrottledError || error instanceof VendorAuthError) return true;
  if (error instanceof VendorUnavailableError) return false;
  return error instanceof VendorHttpError && error.status >= 400 && error.status < 500;
}

/** `Recon`: read the person's request, `POST /recon` at most once, record recon.json. */
export function createBreachReconHandler(deps: BreachDeps): Handler<unknown, ReconOutput | ReconThrottled> {
  return async (event) => reconOrWait(deps, event);
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => breachDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createBreachReconHandler,
});

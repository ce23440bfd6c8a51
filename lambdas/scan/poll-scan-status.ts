/**
 * PollScanStatus: ask the vendor for the scan's status, keep a bounded copy of the raw answer, and
 * schedule the next wait. The Choice state after it decides what happens next: succeeded -> fetch,
 * failed -> fail, deadline exceeded -> time out, anything else (pending, running, unknown) -> wait.
 */

import { setTimeout as delay } from 'node:timers/promises';
import { SFNClient } from '@aws-sdk/client-sfn';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import type { ScanInProgress, StatusSnapshot } from '#lambdas/scan/contracts';
import { type ScanDeps, withLogKeys } from '#lambdas/scan/deps';
import {
  EARLY_END_BUDGET_MARGIN_MS,
  earlyEndWatchDeps,
  type PassReport,
  type TaskResponder,
  watchEarlyEnds,
} from '#lambdas/scan/early-end-watch';
import { parseScanInProgress } from '#lambdas/scan/parse';
import { advancePoll } from '#lambdas/scan/poll-schedule';
import { scanDepsFromEnvironment } from '#lambdas/scan/vendor-deps';
import { isEarlyEndTick } from '#lambdas/scan/waiting-records';
import type { ScanStatus } from '#lambdas/vendor-api/scan/types';

/** Status bodies kept in the state (and the manifest) are cut here: state payloads are limited to 256 KiB. */
export const MAX_RAW_STATUS_BYTES = 8 * 1024;

export async function pollScanStatus(
  deps: ScanDeps,
  input: ScanInProgress & { readonly release?: WaitRelease },
): Promise<ScanInProgress> {
  // The early-end watcher's answer, when it ended the wait: kept for this poll only.
  const { release, ...state } = input;
  const status = await deps.scanClient.getStatus(state.scanUuid);
  const snapshot = toSnapshot(status);
  const poll = advancePoll(state.poll, deps.clock(), deps.settings.poll, release?.ageSeconds);

  const details = {
    domain: state.domain,
    scanUuid: state.scanUuid,
    vendorStatus: snapshot.vendorStatus,
    state: snapshot.state,
    previousState: state.status?.state,
    progress: snapshot.progress,
    attempt: poll.attempt,
    waitedSeconds: poll.waitedSeconds,
    nextWaitSeconds: poll.nextWaitSeconds,
    deadlineExceeded: poll.deadlineExceeded,
    ...(release === undefined ? {} : { waitReleasedEarly: true }),
  };
  if (snapshot.state === 'unknown') {
    // Counted as running (bounded by the deadline); the word may belong in STATUS_VOCABULARY.
    deps.logger.warn('Scan status word not in the vocabulary; treating it as running', details);
  } else if (snapshot.state !== state.status?.state) {
    deps.logger.info('Scan status changed', details);
  } else {
    deps.logger.debug('Scan status unchanged', details);
  }
  if (poll.deadlineExceeded && snapshot.state !== 'succeeded' && snapshot.state !== 'failed') {
    deps.logger.warn('Scan deadline exceeded', {
      ...details,
      deadlineSeconds: deps.settings.poll.deadlineSeconds,
    });
  }
  return { ...state, status: snapshot, poll };
}

/** What the early-end watcher sends with SendTaskSuccess: the scan's age when it saw the end. */
export interface WaitRelease {
  readonly ageSeconds?: number;
}

/** The watcher's answer from the state's `release` field, when it is one (anything else is ignored). */
export function parseWaitRelease(value: unknown): WaitRelease | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const age = (value as { ageSeconds?: unknown }).ageSeconds;
  return typeof age === 'number' && Number.isFinite(age) && age >= 0 ? { ageSeconds: age } : {};
}

export function toSnapshot(status: ScanStatus): StatusSnapshot {
  const { text, truncated } = truncateUtf8(status.raw, MAX_RAW_STATUS_BYTES);
  return {
    state: status.state,
    vendorStatus: status.vendorStatus,
    progress: status.progress,
    raw: text,
    rawTruncated: truncated,
  };
}

/** The longest prefix of `text` that fits in `maxBytes` of UTF-8 without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}

/** `PollScanStatus`: `GET /status`, classify, keep the raw status body, compute the next wait and the deadline. */
export function createPollScanStatusHandler(deps: ScanDeps): Handler<unknown, ScanInProgress> {
  return async (event, context) => {
    const state = parseScanInProgress(event);
    const release = parseWaitRelease((event as { release?: unknown } | null)?.release);
    const scoped = withLogKeys(deps, {
      domain: state.domain,
      scanUuid: state.scanUuid,
      requestId: context?.awsRequestId,
    });
    return pollScanStatus(scoped, release === undefined ? state : { ...state, release });
  };
}

/**
 * The poll function's entry: PollScanStatus for the state machine, and the early-end watcher when
 * the every-minute rule sends its tick (`sfn` answers its SendTaskSuccess). One function serves
 * both: a stack holds 500 resources, and two pipelines in one stack are near that.
 */
export function createPollFunctionHandler(
  deps: ScanDeps,
  sfn: TaskResponder,
): Handler<unknown, ScanInProgress | PassReport[]> {
  const poll = createPollScanStatusHandler(deps);
  return async (event, context) => {
    if (!isEarlyEndTick(event)) return poll(event, context);
    const remaining = context?.getRemainingTimeInMillis?.() ?? 0;
    return watchEarlyEnds(
      earlyEndWatchDeps(deps, sfn, {
        timeBudgetMs: Math.max(0, remaining - EARLY_END_BUDGET_MARGIN_MS),
        sleep: (ms) => delay(ms).then(() => {}),
      }),
    );
  };
}

export const handler = /* @__PURE__ */ createLazyHandler({
  deps: (tools) => ({
    scan: scanDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
    sfn: tools.tracer.captureAWSv3Client(new SFNClient({})),
  }),
  handler: ({ scan, sfn }) => createPollFunctionHandler(scan, sfn),
});

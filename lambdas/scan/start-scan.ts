/**
 * StartScan: validate the domain, start the scan at the vendor (settling a start whose answer was
 * lost), and set up the poll loop. The Lambda entry is at the end.
 */

import {
  VendorNetworkError,
  VendorThrottledError,
  VendorTimeoutError,
  VendorUnavailableError,
} from '#lambdas/platform/errors';
import { normalizeDomain } from '#lambdas/platform/input/validation';
import { createLazyHandler, type Handler } from '#lambdas/platform/runtime/observability';
import { tracedS3Client } from '#lambdas/platform/runtime/s3-client';
import { SCAN_METRIC } from '#lambdas/registry';
import type { ScanDomainInput, ScanInProgress, StartThrottled } from '#lambdas/scan/contracts';
import { type ScanDeps, withLogKeys } from '#lambdas/scan/deps';
import { expectedDurationOf } from '#lambdas/scan/learned-durations';
import { scanOutputPrefix } from '#lambdas/scan/output-prefix';
import { parseRunId, parseScanDomainInput } from '#lambdas/scan/parse';
import { initialPollState } from '#lambdas/scan/poll-schedule';
import { DEFAULT_START_SETTLE, type StartSettleSettings } from '#lambdas/scan/settings';
import { scanDepsFromEnvironment } from '#lambdas/scan/vendor-deps';
import { type ListedScan, readScanListing, type ScanListing } from '#lambdas/vendor-api/scan/scan-listing';
import { ScanStartThrottledError, ScanStartUnresolvedError } from './errors.ts';
import { DEFAULT_START_THROTTLE, nextStartThrottle, parseStartThrottle } from './start-throttle.ts';

export async function startScan(
  deps: ScanDeps,
  input: ScanDomainInput,
  context: SettleContext = {},
): Promise<ScanInProgress> {
  // Both throw InvalidInputError naming the field; Step Functions catches it as ScanRejected.
  const domain = normalizeDomain(input.domain, 'domain', { allowSpecialUse: deps.settings.allowSpecialUse });
  const runId = parseRunId(input.runId);

  // A start whose answer was lost is settled from the vendor's listing (see "Settling a start" below).
  const { uuid, settled, starts } = await startAndSettle(deps, domain, context);
  // The date in the prefix is the day the scan started, in UTC: one scan, one folder, however long it runs.
  const startedAt = deps.clock();
  const outputPrefix = scanOutputPrefix(domain, startedAt, uuid);
  // Read after the start, so a slow read delays the first poll, never the scan; it never throws.
  const expected = await expectedDurationOf(deps, domain);
  const poll = initialPollState(startedAt, deps.settings.poll, expected);
  deps.metrics.record(SCAN_METRIC.scansStarted, 1, 'Count', { workflow: 'scan' });
  deps.logger.info('Scan started', {
    domain,
    scanUuid: uuid,
    runId,
    outputPrefix,
    nextWaitSeconds: poll.nextWaitSeconds,
    ...(expected === undefined ? {} : { expected }),
    ...(settled === undefined ? {} : { settledStart: settled, starts }),
  });
  return {
    domain,
    runId,
    scanUuid: uuid,
    outputPrefix,
    poll,
    ...(settled === undefined ? {} : { settledStart: settled }),
  };
}

/**
 * The StartScan step: `startScan`, or, when the vendor throttled the start (HTTP 429) past the
 * transport's own wait, the wait the state machine makes before starting again (start-throttle.ts).
 * A 429 proves the vendor did not process the start, so the next one is never a second scan.
 */
export async function startScanOrWait(
  deps: ScanDeps,
  input: ScanDomainInput,
  context: SettleContext = {},
): Promise<ScanInProgress | StartThrottled> {
  const throttle = parseStartThrottle(input.startThrottle);
  try {
    return await startScan(deps, input, context);
  } catch (error) {
    if (!(error instanceof VendorThrottledError)) throw error;
    // Validated by startScan before it sent the start.
    const domain = normalizeDomain(input.domain, 'domain', {
      allowSpecialUse: deps.settings.allowSpecialUse,
    });
    const runId = parseRunId(input.runId);
    const decision = nextStartThrottle(
      throttle,
      error.retryAfterMs,
      deps.random ?? Math.random,
      deps.startThrottle ?? DEFAULT_START_THROTTLE,
    );
    if (decision.kind === 'give-up') {
      deps.logger.warn('Start throttled for too long: recorded as rejected', {
        domain,
        runId,
        reason: decision.reason,
      });
      throw new ScanStartThrottledError(OPERATION, decision.reason, { cause: error });
    }
    deps.metrics.record(SCAN_METRIC.startsThrottled, 1, 'Count', { workflow: 'scan' });
    deps.logger.info('Start throttled: the state machine waits, then starts again', {
      domain,
      runId,
      ...decision.state,
    });
    return { domain, runId, startThrottle: decision.state };
  }
}

/*
 * Settling a start: a start whose outcome is unknown is settled, not given up on.
 *
 * `POST /scan` is not idempotent, so the transport never repeats it after a 5xx, a reset or a
 * timeout that came after the request was sent: the vendor may have created the scan. Instead of
 * rejecting the domain, StartScan asks the vendor (`GET /scans`) what happened, looking for a scan
 * of this domain created since just before the first start:
 *
 * - exactly one: it is adopted, as if the start had answered;
 * - none, on two looks a short wait apart (the listing may lag behind a start): the start is
 *   repeated after the transport's backoff;
 * - several, or a listing that cannot be read: ScanStartUnresolvedError, which the state machine
 *   records as ScanRejected (reconciliation archives what the vendor ran).
 *
 * Settling runs inside the StartScan invocation rather than as states: it is a few calls with
 * second-long waits, so the execution history and the ASL stay as they were, and the invocation's
 * remaining time bounds it (no new start is sent without the time its answer may take).
 *
 * A 429 on any of these starts proves that start was not processed; it ends the invocation and the
 * state machine waits before StartScan runs again (startScanOrWait above). The earlier starts' doubt
 * was already settled as "none", so the next start has the same guarantee as a repeated one here.
 *
 * The guarantee left: at most one scan per start as long as the listing shows a created scan
 * within the settle wait. A listing that lags longer makes "none" wrong and the repeated start
 * creates a second scan; the next settle round then sees two and stops, and reconciliation links
 * both to this domain's failure record.
 */

export type StartSettleOutcome = 'adopted' | 'retried' | 'unresolved';

export interface SettledStart {
  readonly uuid: string;
  /** How the start was settled; undefined when the first start answered. */
  readonly settled: 'adopted' | 'retried' | undefined;
  /** Starts sent. */
  readonly starts: number;
}

export interface SettleContext {
  /** Milliseconds left in the invocation (Lambda's context). @default unlimited */
  readonly timeLeftMs?: (() => number) | undefined;
}

const OPERATION = 'scan.startScan';

/** Errors after which the vendor may or may not have created the scan. */
export function startOutcomeUnknown(error: unknown): boolean {
  if (error instanceof VendorUnavailableError) return true;
  if (error instanceof VendorTimeoutError) return error.phase === 'request';
  // Unframed bodies are a download's concern; a start answers with a small JSON body.
  return error instanceof VendorNetworkError && !error.requestNotSent;
}

/** What the vendor's listing says became of a start: one scan, none, or no safe conclusion. */
export type Look =
  | { readonly kind: 'one'; readonly scan: ListedScan }
  | { readonly kind: 'none' }
  | { readonly kind: 'unresolved'; readonly reason: string };

export async function startAndSettle(
  deps: ScanDeps,
  domain: string,
  context: SettleContext = {},
): Promise<SettledStart> {
  const settings = { ...DEFAULT_START_SETTLE, ...deps.startSettle };
  const sleep = deps.sleep ?? defaultSleep;
  const random = deps.random ?? Math.random;
  const timeLeft = context.timeLeftMs ?? (() => Number.POSITIVE_INFINITY);
  // Fixed at the first start: a scan any of this invocation's starts created is younger.
  const since = deps.clock().getTime() - settings.clockSkewMs;
  let retried = false;
  for (let start = 1; ; start += 1) {
    let doubt: unknown;
    try {
      const { uuid } = await deps.scanClient.startScan(domain);
      return { uuid, settled: retried ? 'retried' : undefined, starts: start };
    } catch (error) {
      if (!startOutcomeUnknown(error)) throw error;
      doubt = error;
    }
    const found = await look(deps, domain, since, settings, sleep, timeLeft);
    if (found.kind === 'one') {
      record(deps, 'adopted');
      deps.logger.warn('Start settled: the scan the lost answer created was adopted', {
        domain,
        scanUuid: found.scan.uuid,
        starts: start,
        doubt: errorName(doubt),
      });
      return { uuid: found.scan.uuid, settled: 'adopted', starts: start };
    }
    const reason =
      found.kind === 'unresolved'
        ? found.reason
        : start >= settings.maxStarts
          ? `no scan was created by ${start} starts, and no more are sent in one invocation`
          : undefined;
    const delay = Math.floor(
      Math.min(1, Math.max(0, random())) *
        Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (start - 1)),
    );
    const unresolved =
      reason ??
      (timeLeft() < delay + settings.startReserveMs
        ? 'no scan was created, and too little of the invocation is left for another start'
        : undefined);
    if (unresolved !== undefined) {
      record(deps, 'unresolved');
      deps.logger.warn('Start unresolved: recorded as rejected for reconciliation', {
        domain,
        starts: start,
        doubt: errorName(doubt),
        reason: unresolved,
      });
      throw new ScanStartUnresolvedError(OPERATION, `${unresolved} (after ${errorName(doubt)})`, {
        cause: doubt,
      });
    }
    record(deps, 'retried');
    deps.logger.info('Start settled: the vendor created no scan, so the start is repeated', {
      domain,
      starts: start,
      doubt: errorName(doubt),
      retryInMs: delay,
    });
    retried = true;
    await sleep(delay);
  }
}

/** Up to `looks` listings, a lag wait apart, until one shows a candidate. */
async function look(
  deps: ScanDeps,
  domain: string,
  since: number,
  settings: StartSettleSettings,
  sleep: (ms: number) => Promise<void>,
  timeLeft: () => number,
): Promise<Look> {
  for (let round = 1; ; round += 1) {
    const found = await lookOnce(deps, domain, since);
    if (found.kind !== 'none' || round >= settings.looks) return found;
    // Without time for the wait, one look is all the evidence there is: not enough to send again.
    if (timeLeft() < settings.lagWaitMs + settings.startReserveMs) {
      return {
        kind: 'unresolved',
        reason: 'too little of the invocation is left to look at the listing again',
      };
    }
    await sleep(settings.lagWaitMs);
  }
}

async function lookOnce(deps: ScanDeps, domain: string, since: number): Promise<Look> {
  let raw: unknown;
  try {
    raw = (await deps.scanClient.listScans()).raw;
  } catch (error) {
    return { kind: 'unresolved', reason: `the scan listing could not be read (${errorName(error)})` };
  }
  return lookInListing(
    readScanListing(raw, deps.settings.listFields, deps.settings.statusVocabulary),
    domain,
    since,
  );
}

/**
 * The settle rule on a listing already read: exactly one scan of the domain created since `since`
 * (epoch ms) is the one a start made; none is none; anything the listing leaves in doubt (an
 * unreadable entry, a scan without a creation time, several candidates) concludes nothing. The
 * local runner's resume applies the same rule to the scans an interrupted run left in flight.
 */
export function lookInListing(listing: ScanListing, domain: string, since: number): Look {
  const whole = listing.unreadable.find((entry) => entry.index === null);
  if (whole) return { kind: 'unresolved', reason: `the scan listing could not be parsed: ${whole.reason}` };
  // An unreadable entry may be the scan in question: neither "one" nor "none" can be concluded.
  if (listing.unreadableCount > 0) {
    return {
      kind: 'unresolved',
      reason: `${listing.unreadableCount} of ${listing.entries} listed scans could not be read`,
    };
  }
  const ofDomain = listing.scans.filter((scan) => scan.domain === domain);
  if (ofDomain.some((scan) => scan.createdAt === undefined)) {
    return { kind: 'unresolved', reason: 'the listing gives no creation time for scans of this domain' };
  }
  const candidates = ofDomain.filter((scan) => (scan.createdAt as Date).getTime() >= since);
  if (candidates.length > 1) {
    return {
      kind: 'unresolved',
      reason: `${candidates.length} scans of this domain were created since the start`,
    };
  }
  const [only] = candidates;
  return only === undefined ? { kind: 'none' } : { kind: 'one', scan: only };
}

function record(deps: ScanDeps, outcome: StartSettleOutcome): void {
  deps.metrics.record(SCAN_METRIC.startsSettled, 1, 'Count', { workflow: 'scan', outcome });
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `StartScan`: validate the domain, `POST /scan`, compute the output prefix and the first wait; or,
 * when the vendor throttled the start, how long the state machine waits before starting again.
 */
export function createStartScanHandler(deps: ScanDeps): Handler<unknown, ScanInProgress | StartThrottled> {
  return async (event, context) => {
    const input = parseScanDomainInput(event);
    // The raw input may be invalid: log it only once normalised (startScan does), never the event.
    const scoped = withLogKeys(deps, { runId: input.runId, requestId: context?.awsRequestId });
    // The settle waits must fit the invocation: no new start without time for its answer.
    const timeLeft = context?.getRemainingTimeInMillis;
    return startScanOrWait(scoped, input, timeLeft ? { timeLeftMs: () => timeLeft.call(context) } : {});
  };
}

export const handler = /* @__PURE__ */ createLazyHandler({
  // S3 only to read the learned durations (learned-durations.ts).
  deps: (tools) => scanDepsFromEnvironment(process.env, tools, { s3: tracedS3Client(tools) }),
  handler: createStartScanHandler,
});

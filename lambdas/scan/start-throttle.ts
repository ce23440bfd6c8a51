/**
 * A start the vendor throttled (HTTP 429) past what the transport waits for inside one invocation.
 *
 * A 429 proves the vendor did not process the `POST /scan`, so starting again never makes a second
 * paid scan. The ScanDomain state machine waits instead of the Lambda: StartScan answers with a
 * `startThrottle` record whose `waitSeconds` a Wait state (SecondsPath) waits exactly, then runs
 * StartScan again: the vendor's Retry-After plus jitter, bounded in rounds and total wait
 * (lambdas/platform/runs/throttle-wait.ts). Past either bound the start fails with
 * ScanStartThrottledError, which the state machine records as ScanRejected.
 */
import {
  DEFAULT_THROTTLE_WAIT,
  nextThrottleWait,
  parseThrottleWait,
  type ThrottleDecision,
  type ThrottleWaitSettings,
  type ThrottleWaitState,
} from '#lambdas/platform/runs/throttle-wait';

export type StartThrottleSettings = ThrottleWaitSettings;
export type StartThrottleState = ThrottleWaitState;
export type { ThrottleDecision };

export const DEFAULT_START_THROTTLE: StartThrottleSettings = DEFAULT_THROTTLE_WAIT;

/** The next throttle round of a start, or why there is none. */
export function nextStartThrottle(
  previous: StartThrottleState | undefined,
  retryAfterMs: number | undefined,
  random: () => number,
  settings: StartThrottleSettings = DEFAULT_START_THROTTLE,
): ThrottleDecision {
  return nextThrottleWait(previous, retryAfterMs, random, settings, 'starts');
}

/** The `startThrottle` field of StartScan's input: absent on the first start. */
export function parseStartThrottle(value: unknown): StartThrottleState | undefined {
  return parseThrottleWait(value, 'startThrottle');
}

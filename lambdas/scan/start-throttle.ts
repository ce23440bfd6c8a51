/**
 * A start the vendor throttled (HTTP 429) past what the transport waits for inside one invocation.
 *
 * A 429 proves the vendor did not process the `POST /scan`, so starting again never makes a second
 * paid scan. The ScanDomain state machine waits instead of the Lambda: StartScan answers with a
 * `startThrottle` record whose `waitSeconds` a Wait state (SecondsPath) waits exactly, then runs
 * StartScan again. The wait is the vendor's Retry-After plus a jitter computed here, so it is never
 * shorter than the vendor asked and scans throttled together do not all come back at the same
 * instant. The rounds and their total wait are bounded; past either bound the start fails with
 * ScanStartThrottledError, which the state machine records as ScanRejected.
 */
import { InvalidInputError } from '#lambdas/platform/errors';

export interface StartThrottleSettings {
  /** Throttled starts waited out before giving up. */
  readonly maxRounds: number;
  /**
   * Seconds all throttle waits of one scan may add up to. The ScanDomain execution timeout adds
   * this budget to the poll deadline (which starts at the accepted start), so a throttled scan
   * fails with a recorded outcome instead of timing out.
   */
  readonly maxTotalWaitSeconds: number;
  /** Jitter ceiling of the first round; it doubles each round up to `maxJitterSeconds`. */
  readonly baseJitterSeconds: number;
  readonly maxJitterSeconds: number;
}

export const DEFAULT_START_THROTTLE: StartThrottleSettings = Object.freeze({
  maxRounds: 10,
  maxTotalWaitSeconds: 3_600,
  baseJitterSeconds: 10,
  maxJitterSeconds: 120,
});

/** What StartScan hands the Wait state, and reads back when the start is tried again. */
export interface StartThrottleState {
  /** Throttled starts so far, this one included. */
  readonly rounds: number;
  /** Seconds the Wait state waits before the next start: `retryAfterSeconds` + jitter. */
  readonly waitSeconds: number;
  /** The vendor's Retry-After, rounded up to whole seconds; 0 when it sent none (or an unusable one). */
  readonly retryAfterSeconds: number;
  /** Seconds waited in all rounds, this round's wait included. */
  readonly waitedSeconds: number;
}

export type ThrottleDecision =
  | { readonly kind: 'wait'; readonly state: StartThrottleState }
  | { readonly kind: 'give-up'; readonly reason: string };

/**
 * The next throttle round, or why there is none. `retryAfterMs` comes from the transport (already
 * parsed from the header); anything but a finite, non-negative number counts as absent.
 */
export function nextStartThrottle(
  previous: StartThrottleState | undefined,
  retryAfterMs: number | undefined,
  random: () => number,
  settings: StartThrottleSettings = DEFAULT_START_THROTTLE,
): ThrottleDecision {
  const rounds = (previous?.rounds ?? 0) + 1;
  const waited = previous?.waitedSeconds ?? 0;
  if (rounds > settings.maxRounds) {
    return {
      kind: 'give-up',
      reason: `the vendor throttled ${rounds} starts in a row (at most ${settings.maxRounds})`,
    };
  }
  const usable = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0;
  const retryAfterSeconds = usable ? Math.ceil(retryAfterMs / 1000) : 0;
  const left = settings.maxTotalWaitSeconds - waited;
  if (retryAfterSeconds > left) {
    return {
      kind: 'give-up',
      reason: `the vendor asked to wait ${retryAfterSeconds} s, more than the ${left} s left of the ${settings.maxTotalWaitSeconds} s throttle budget`,
    };
  }
  const ceiling = Math.min(settings.maxJitterSeconds, settings.baseJitterSeconds * 2 ** (rounds - 1));
  const jitter = Math.floor(Math.min(1, Math.max(0, random())) * ceiling);
  // At least one second, so a throttle without Retry-After never starts again at once; never past the budget.
  const waitSeconds = Math.min(left, Math.max(1, retryAfterSeconds + jitter));
  if (waitSeconds < 1) {
    return { kind: 'give-up', reason: `the ${settings.maxTotalWaitSeconds} s throttle budget is spent` };
  }
  return {
    kind: 'wait',
    state: { rounds, waitSeconds, retryAfterSeconds, waitedSeconds: waited + waitSeconds },
  };
}

/** The `startThrottle` field of StartScan's input: absent on the first start. */
export function parseStartThrottle(value: unknown): StartThrottleState | undefined {
  if (value === undefined) return undefined;
  const field = 'startThrottle';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidInputError(field, 'must be a JSON object');
  }
  const record = value as Record<string, unknown>;
  const count = (name: keyof StartThrottleState, min: number): number => {
    const n = record[name];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min) {
      throw new InvalidInputError(`${field}.${name}`, `must be a whole number of at least ${min}`);
    }
    return n;
  };
  return {
    rounds: count('rounds', 1),
    waitSeconds: count('waitSeconds', 1),
    retryAfterSeconds: count('retryAfterSeconds', 0),
    waitedSeconds: count('waitedSeconds', 1),
  };
}

/**
 * The wait a state machine makes after the vendor throttled a call (HTTP 429) that must not be
 * retried blindly, because it is not idempotent (a start, a report request).
 *
 * A 429 proves the vendor did not process the call, so calling again never does the work twice. The
 * step answers with a record whose `waitSeconds` a Wait state (SecondsPath) waits exactly, then the
 * state machine runs the step again. The wait is the vendor's Retry-After plus a jitter computed
 * here: never shorter than the vendor asked (a Step Functions Retry cannot read Retry-After, and its
 * jitter may come back sooner), and calls throttled together do not all come back at the same
 * instant. The rounds and their total wait are bounded; past either bound the step gives up.
 */
import { InvalidInputError } from '#lambdas/platform/errors';

export interface ThrottleWaitSettings {
  /** Throttled calls waited out before giving up. */
  readonly maxRounds: number;
  /**
   * Seconds all throttle waits of one execution may add up to. A state machine that waits them adds
   * this budget to its execution timeout, so a throttled execution fails with a recorded outcome
   * instead of timing out.
   */
  readonly maxTotalWaitSeconds: number;
  /** Jitter ceiling of the first round; it doubles each round up to `maxJitterSeconds`. */
  readonly baseJitterSeconds: number;
  readonly maxJitterSeconds: number;
}

export const DEFAULT_THROTTLE_WAIT: ThrottleWaitSettings = Object.freeze({
  maxRounds: 10,
  maxTotalWaitSeconds: 3_600,
  baseJitterSeconds: 10,
  maxJitterSeconds: 120,
});

/** What the step hands the Wait state, and reads back when it runs again. */
export interface ThrottleWaitState {
  /** Throttled calls so far, this one included. */
  readonly rounds: number;
  /** Seconds the Wait state waits before the next call: `retryAfterSeconds` + jitter. */
  readonly waitSeconds: number;
  /** The vendor's Retry-After, rounded up to whole seconds; 0 when it sent none (or an unusable one). */
  readonly retryAfterSeconds: number;
  /** Seconds waited in all rounds, this round's wait included. */
  readonly waitedSeconds: number;
}

export type ThrottleDecision =
  | { readonly kind: 'wait'; readonly state: ThrottleWaitState }
  | { readonly kind: 'give-up'; readonly reason: string };

/**
 * The next throttle round, or why there is none. `retryAfterMs` comes from the transport (already
 * parsed from the header); anything but a finite, non-negative number counts as absent. `calls`
 * names what was throttled in the give-up reason ("starts", "report requests").
 */
export function nextThrottleWait(
  previous: ThrottleWaitState | undefined,
  retryAfterMs: number | undefined,
  random: () => number,
  settings: ThrottleWaitSettings,
  calls: string,
): ThrottleDecision {
  const rounds = (previous?.rounds ?? 0) + 1;
  const waited = previous?.waitedSeconds ?? 0;
  if (rounds > settings.maxRounds) {
    return {
      kind: 'give-up',
      reason: `the vendor throttled ${rounds} ${calls} in a row (at most ${settings.maxRounds})`,
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
  // At least one second, so a throttle without Retry-After never calls again at once; never past the budget.
  const waitSeconds = Math.min(left, Math.max(1, retryAfterSeconds + jitter));
  if (waitSeconds < 1) {
    return { kind: 'give-up', reason: `the ${settings.maxTotalWaitSeconds} s throttle budget is spent` };
  }
  return {
    kind: 'wait',
    state: { rounds, waitSeconds, retryAfterSeconds, waitedSeconds: waited + waitSeconds },
  };
}

/** The throttle record in a step's input (`field` names it in errors): absent on the first call. */
export function parseThrottleWait(value: unknown, field: string): ThrottleWaitState | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidInputError(field, 'must be a JSON object');
  }
  const record = value as Record<string, unknown>;
  const count = (name: keyof ThrottleWaitState, min: number): number => {
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

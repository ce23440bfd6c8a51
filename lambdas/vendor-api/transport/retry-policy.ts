/**
 * The retry policy of the vendor transport, as pure functions: whether an outcome may be retried
 * for a request's retry mode, and how long to wait first (full jitter, never sooner than the
 * vendor's Retry-After). No sockets: tested on values alone.
 */

import type { AttemptOutcome } from './outcome.ts';
import type { RetryPolicy, VendorFailureClass } from './types.ts';

/**
 * - `idempotent`: retried after 429, 5xx, network errors and timeouts.
 * - `non-idempotent`: retried only when the answer proves the request was not processed
 *   (429, or a connection that was never established).
 * - `never`: never retried (rotate: any second attempt could kill a key we never saw).
 */
export type RetryMode = 'idempotent' | 'non-idempotent' | 'never';

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxElapsedMs: 60_000,
};

export function retryAllowed(
  mode: RetryMode,
  outcome: Exclude<AttemptOutcome<unknown>, { kind: 'ok' | 'permanent' | 'auth' }>,
): boolean {
  if (mode === 'never') return false;
  if (mode === 'idempotent') return true;
  // Non-idempotent: only when the vendor provably did not act on it. A 5xx, a timeout or a reset
  // may come after the scan was already created, and a second one would duplicate it.
  if (outcome.kind === 'status') return outcome.status === 429;
  return outcome.requestNotSent;
}

/** Retry-After as delta-seconds or an HTTP-date, in ms from now; undefined when absent or invalid. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // All three HTTP-date forms name the day or month; Date.parse alone would read "-5" as a year.
  if (!/[a-z]{3}/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** A failed outcome the retry loop may wait for (not success, not permanent, not an auth refusal). */
export type RetryableOutcome = Exclude<AttemptOutcome<unknown>, { kind: 'ok' | 'permanent' | 'auth' }>;

/**
 * Milliseconds to wait before the next attempt, or undefined when the loop must give up now:
 * the mode forbids a retry, the attempts or the elapsed budget are spent, or the vendor asked for
 * a longer wait than a billed Lambda should sleep (it surfaces to the orchestrator instead).
 */
export function retryDelay(options: {
  readonly policy: RetryPolicy;
  readonly mode: RetryMode;
  readonly outcome: RetryableOutcome;
  readonly failures: number;
  readonly elapsedMs: number;
  readonly random: () => number;
}): number | undefined {
  const { policy, outcome, failures } = options;
  if (!retryAllowed(options.mode, outcome)) return undefined;
  if (failures >= policy.maxAttempts) return undefined;
  // Full jitter: spreads retries of many concurrent executions instead of synchronising them.
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failures - 1));
  const jitter = Math.min(1, Math.max(0, options.random()));
  const backoff = Math.floor(jitter * ceiling);
  const retryAfterMs = outcome.kind === 'status' ? outcome.retryAfterMs : undefined;
  if (retryAfterMs !== undefined && retryAfterMs > policy.maxDelayMs) return undefined;
  // The jitter goes on top of Retry-After: never sooner than the vendor asked, and the executions
  // the vendor throttled together do not all come back at the same instant.
  const delay = (retryAfterMs ?? 0) + backoff;
  if (options.elapsedMs + delay > policy.maxElapsedMs) return undefined;
  return delay;
}

/** The failure class of an outcome, a word fit for a metric dimension and a progress line. */
export function failureClass(
  outcome: RetryableOutcome | Extract<AttemptOutcome<unknown>, { kind: 'auth' | 'permanent' }>,
): VendorFailureClass {
  switch (outcome.kind) {
    case 'auth':
      return 'auth';
    case 'status':
      return outcome.status === 429 ? 'throttled' : 'unavailable';
    case 'timeout':
      return 'timeout';
    case 'network':
      return 'network';
    default:
      return 'refused';
  }
}

/**
 * The scan workflow's own failures. Each name is stable (see lambdas/platform/errors.ts): the list
 * summary reads it from a domain's recorded outcome, so it is part of the scan contract
 * (contracts.ts re-exports it).
 */

export const SCAN_ERROR_NAME = {
  /** A start whose answer was lost, and the vendor's listing could not say whether it created a scan. */
  ScanStartUnresolvedError: 'ScanStartUnresolvedError',
  /** The vendor kept throttling the start past the throttle rounds or their total wait. */
  ScanStartThrottledError: 'ScanStartThrottledError',
} as const;

/**
 * StartScan lost the answer of a start and could not settle, from the vendor's listing, whether a
 * scan was created (several candidates, a listing that cannot be read, or no time left). Never
 * retried: the state machine records the domain as ScanRejected, and scan reconciliation archives
 * whatever the vendor did run. The reason names the problem, never a key or an address.
 */
export class ScanStartUnresolvedError extends Error {
  readonly reason: string;
  constructor(operation: string, reason: string, options: { cause?: unknown } = {}) {
    super(
      `${operation}: the outcome of the start is unknown and could not be settled: ${reason}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = SCAN_ERROR_NAME.ScanStartUnresolvedError;
    this.reason = reason;
  }
}

/**
 * The vendor throttled (HTTP 429) the start more rounds, or asked for a longer wait, than one scan
 * may spend waiting (start-throttle.ts). The vendor created no scan. Never retried: the state
 * machine records the domain as ScanRejected.
 */
export class ScanStartThrottledError extends Error {
  readonly reason: string;
  constructor(operation: string, reason: string, options: { cause?: unknown } = {}) {
    super(
      `${operation}: the vendor kept throttling the start: ${reason}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = SCAN_ERROR_NAME.ScanStartThrottledError;
    this.reason = reason;
  }
}

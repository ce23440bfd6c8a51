/**
 * The breach workflow's own failures. Each name is stable (see lambdas/platform/errors.ts): the
 * breach state machine's tests and runbooks name it.
 */

export const BREACH_ERROR_NAME = {
  ReconOutcomeUnknownError: 'ReconOutcomeUnknownError',
  ReconThrottledError: 'ReconThrottledError',
} as const;

/**
 * A recon was claimed for this request but its answer was never recorded: an earlier attempt sent
 * `POST /recon` and died (timeout, reset, crash) before writing recon.json. The vendor may have made
 * the report, so the request is never sent again; reconciliation archives the report if it exists.
 */
export class ReconOutcomeUnknownError extends Error {
  readonly claimKey: string;
  constructor(claimKey: string) {
    super(
      `A recon for this request was already sent and its answer is unknown (claim ${claimKey}); it is not repeated. Breach reconciliation archives the report if the vendor made one.`,
    );
    this.name = BREACH_ERROR_NAME.ReconOutcomeUnknownError;
    this.claimKey = claimKey;
  }
}

/**
 * The vendor kept throttling the recon request past the rounds or the total wait the state machine
 * waits out (lambdas/platform/runs/throttle-wait.ts). A 429 proves no report was made, so the request
 * may be sent again by a later run.
 */
export class ReconThrottledError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`The vendor throttled the recon request: ${reason}; no report was made`, options);
    this.name = BREACH_ERROR_NAME.ReconThrottledError;
  }
}

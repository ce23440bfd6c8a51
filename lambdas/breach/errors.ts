/**
 * The breach workflow's own failures. Each name is stable (see lambdas/platform/errors.ts): the
 * breach state machine's tests and runbooks name it.
 */

export const BREACH_ERROR_NAME = {
  ReconOutcomeUnknownError: 'ReconOutcomeUnknownError',
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

/**
 * The words of the pipeline's metric dimensions a `metric…()` method takes: each the closed set
 * the handlers record (test/stack/pipeline-access.cdk.test.ts holds them to it).
 */

/** Why a scan failed, as its ScansFailed or ScansTimedOut metric's `outcome` dimension says. */
export enum ScanFailureReason {
  /** The vendor reported the scan failed. */
  SCAN_FAILED = 'ScanFailed',
  /** The vendor refused to start it. */
  SCAN_REJECTED = 'ScanRejected',
  /** Polling its status failed past every retry. */
  POLL_FAILED = 'PollFailed',
  /** Fetching an output failed past every retry. */
  OUTPUT_FETCH_FAILED = 'OutputFetchFailed',
  /** Writing its manifest failed. */
  MANIFEST_FAILED = 'ManifestFailed',
  /** An execution started by hand failed with an error of its own. */
  OTHER = 'Other',
}

/** What a breach recon answered, as its BreachReports metric's `outcome` dimension says. */
export enum BreachReportOutcome {
  /** The vendor found something: a report to archive. */
  SUCCESS = 'success',
  /** The vendor found nothing for the person. */
  NO_RESULTS = 'no_results',
}

/** Who archived a breach report, as its BreachReportsArchived metric's `outcome` dimension says. */
export enum BreachArchiveOrigin {
  /** The breach workflow, right after the recon. */
  WORKFLOW = 'workflow',
  /** Breach reconciliation, for a report the workflow never archived. */
  RECONCILED = 'reconciled',
}

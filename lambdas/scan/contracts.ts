/**
 * Payloads that flow between the states of the scan state machines. The CDK definitions
 * (lib/platform/*), the handlers (lambdas/*) and the local runner all use these shapes.
 * Nothing here may ever hold a credential: state input and output are visible in the console
 * and in execution history.
 */

import type { StartThrottleState } from '#lambdas/scan/start-throttle';
import type { ScanState } from '#lambdas/vendor-api/scan/types';

/** Input of the per-domain state machine, as the list workflow, a schedule or a user passes it. */
export interface ScanDomainInput {
  /** As given; the start step validates and normalises it (URL -> host, IDN -> punycode). */
  readonly domain: string;
  /** Identifies the run that asked for this scan (list run id, schedule fire, "adhoc"). Optional. */
  readonly runId?: string;
  /** Set by StartScan itself when the vendor throttled the previous start; never by a caller. */
  readonly startThrottle?: StartThrottleState;
}

/**
 * StartScan's output when the vendor throttled the start (HTTP 429): no scan exists yet. The state
 * machine waits `startThrottle.waitSeconds` (WaitForStartSlot), then hands this back to StartScan.
 */
export interface StartThrottled {
  readonly domain: string;
  readonly runId: string;
  readonly startThrottle: StartThrottleState;
}

/** Poll bookkeeping carried through the wait/poll loop. */
export interface PollState {
  /** Number of status polls made so far. */
  readonly attempt: number;
  /** Seconds the next Wait state waits (SecondsPath). */
  readonly nextWaitSeconds: number;
  /** Sum of every wait scheduled so far: the scan's age as the state machine sees it. */
  readonly waitedSeconds: number;
  /** ISO time the scan was started at the vendor. */
  readonly startedAt: string;
  /** True once max(wall-clock age, waitedSeconds) >= the deadline. */
  readonly deadlineExceeded: boolean;
  /** The scan's age at the latest poll, max(wall clock, waitedSeconds); absent before the first. */
  readonly ageAtLastPollSeconds?: number;
  /** The scan's age at the poll before the latest (0 when the latest was the first). */
  readonly ageAtPreviousPollSeconds?: number;
  /** What StartScan learned to expect of this scan's duration; absent when nothing was learned. */
  readonly expected?: ExpectedDuration;
}

/** How long a scan is expected to take, from recent scans (lambdas/scan/learned-durations.ts). */
export interface ExpectedDuration {
  /** The shortest recent duration, in seconds. */
  readonly earliestSeconds: number;
  /** The longest recent duration, in seconds (>= earliestSeconds). */
  readonly latestSeconds: number;
  /** Learned from this domain's recent scans, or, when it has none, from the domains next to it. */
  readonly basis: 'domain' | 'neighbours';
}

export interface StatusSnapshot {
  readonly state: ScanState;
  readonly vendorStatus: string | undefined;
  readonly progress: number | undefined;
  /**
   * The raw status body, redacted (every key value in use, secrets' shapes, addresses; otherwise
   * byte-for-byte), when it is at most 8 KiB (the last one ends up in the manifest); larger bodies
   * are cut there and `rawTruncated` is set, to keep state payloads small.
   */
  readonly raw: string;
  readonly rawTruncated: boolean;
}

/** Output of StartScan, input and output of PollScanStatus. */
export interface ScanInProgress {
  readonly domain: string;
  readonly runId: string;
  readonly scanUuid: string;
  /** `scans/<domain>/<yyyy>/<mm>/<dd>/<scan_uuid>/`, in the results bucket. */
  readonly outputPrefix: string;
  readonly poll: PollState;
  readonly status?: StatusSnapshot;
  /** Set when the start's answer was lost and StartScan settled it from the vendor's listing. */
  readonly settledStart?: SettledStartOutcome;
}

/** How a start whose answer was lost was settled: its scan adopted, or the start sent again. */
export type SettledStartOutcome = 'adopted' | 'retried';

/**
 * The names of the scan workflow's own errors are part of this contract too: a domain's outcome
 * carries one (`ScanOutcome.error.name`), and the list summary counts unresolved starts by it.
 */
export { SCAN_ERROR_NAME } from '#lambdas/scan/errors';
/**
 * The table of scan outputs (scan-outputs.ts) is part of this contract: other workflows (the
 * operations alarms) read it here. `ScanOutputName` is the keys of the table.
 */
export { SCAN_OUTPUTS, type ScanOutput, type ScanOutputName } from '#lambdas/scan/scan-outputs';
/** Its variables are public too: the domain-list summary reads the ScanDomain machine's. */
export { SCAN_VARIABLES } from '#lambdas/scan/variables';

/** Output of one FetchOutput task. */
export interface StoredObject {
  /** The output's name in the deployed table (a `ScanOutputName` unless the table was extended). */
  readonly name: string;
  readonly bucket: string;
  readonly key: string;
  readonly size: number;
  readonly sha256: string;
  readonly contentType: string | undefined;
  readonly versionId: string | undefined;
}

/** What a finished per-domain execution outputs (success) or records (failure). */
export interface ScanOutcome {
  readonly domain: string;
  readonly state: 'succeeded' | 'failed' | 'timed_out' | 'rejected';
  readonly scanUuid: string | undefined;
  readonly outputPrefix: string | undefined;
  readonly manifestKey: string | undefined;
  /** Error name and a credential-free message, for failures. */
  readonly error: { readonly name: string; readonly message: string } | undefined;
  /** Set when StartScan settled a start whose answer was lost (see ScanInProgress). */
  readonly settledStart?: SettledStartOutcome;
}

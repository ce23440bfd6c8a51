/**
 * The pipeline's metrics as core code sees them: names, closed dimensions, and the small
 * {@link PipelineMetrics} interface it records through. Powertools Metrics stands behind it in a
 * Lambda (`#lambdas/platform/runtime/observability`); the local runner and the tests pass an in-memory recorder.
 *
 * Dimensions are a closed set of low-cardinality words: never a domain, an email, a scan id or a
 * key, which would leak them into CloudWatch and make every value its own (billed) metric.
 */
import type { VendorOperation } from '#lambdas/platform/vendor-api/types';

/** The CloudWatch namespace of every pipeline metric. */
export const METRICS_NAMESPACE = 'SecurityPipeline';

/** The pipeline's metric names, so a dashboard or alarm can never name one that is not emitted. */
export const METRIC = {
  scansStarted: 'ScansStarted',
  /**
   * Starts whose answer was lost and that StartScan settled from the vendor's listing, by outcome:
   * `adopted` (the scan the start created), `retried` (none was created; sent again),
   * `unresolved` (recorded as ScanRejected for reconciliation).
   */
  startsSettled: 'StartsSettled',
  scansSucceeded: 'ScansSucceeded',
  scansFailed: 'ScansFailed',
  scansTimedOut: 'ScansTimedOut',
  scanDuration: 'ScanDurationSeconds',
  bytesStored: 'BytesStored',
  vendorRetries: 'VendorRetries',
  vendorErrors: 'VendorErrors',
  /** Recons answered, by outcome (`success`, `no_results`). */
  breachReports: 'BreachReports',
  /** Report ZIPs verified and archived, by origin (`workflow`, `reconciled`). */
  breachArchived: 'BreachReportsArchived',
  /** Report ZIPs refused by the archive check, by the check that failed. */
  archiveVerificationFailures: 'ArchiveVerificationFailures',
  /** Verified report ZIPs kept beside other verified bytes under the same report name, by origin. */
  archiveConflicts: 'ArchiveConflicts',
  /** Key rotations finished (AWSCURRENT moved to the vendor's new key). */
  keyRotations: 'KeyRotations',
  /** Seconds the vendor held a key AWSCURRENT did not name: stored as pending → promoted. */
  rotationWindow: 'RotationWindowSeconds',
  /** The vendor rotated and the new key was lost: a lockout. */
  rotationResponseLost: 'RotationResponseLost',
  /** A rotate answer in which no key worked within the propagation window (kept in ROTATION-ANSWER). */
  rotateAnswerUnparsable: 'RotateAnswerUnparsable',
  /** A rotate answered with the key already in use: the vendor did not change the key. */
  rotateKeyUnchanged: 'RotateKeyUnchanged',
  /** Mirror secrets that could not be written and verified after a rotation. */
  mirrorWriteFailures: 'MirrorWriteFailures',
  /** ApiKeyRotated events that could not be published. */
  rotationEventFailures: 'RotationEventFailures',
  /** Days since the org key was last rotated (or the secret created), measured daily. */
  apiKeyAge: 'ApiKeyAgeDays',
  /** Scans the vendor ran that reconciliation archived (the workflow never wrote their manifest). */
  scansReconciled: 'ScansReconciled',
  /** Each numeric field of the vendor's `GET /stats`, by its dot path (the `statistic` dimension). */
  vendorStatistic: 'VendorScanStatistic',
  /** Growth of the vendor's count of finished scans since the previous reconciliation read it. */
  vendorFinishedIncrease: 'VendorScansFinishedIncrease',
  /** Growth of the vendor's count of failed scans since the previous reconciliation read it. */
  vendorFailedIncrease: 'VendorScansFailedIncrease',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

export type MetricUnitName = 'Count' | 'Seconds' | 'Bytes' | 'Milliseconds' | 'NoUnit';

/**
 * The only dimensions a pipeline metric may carry: words from fixed vocabularies. A type, not a
 * convention: `operation` is a vendor operation name (`scan.getReport`), `outcome` a result class.
 */
export interface MetricDimensions {
  /** Which workflow emitted it: `scan`, `list`, `breach`, `rotation`. */
  readonly workflow?: 'scan' | 'list' | 'breach' | 'rotation';
  /** A vendor client operation, e.g. `scan.getStatus`. */
  readonly operation?: VendorOperation;
  /** A result class, e.g. `retried`, `throttled`, `unavailable`, `succeeded`. */
  readonly outcome?: string;
  /** A stored output, by a name from its workflow's fixed table (a scan output's name, `archive`). */
  readonly output?: string;
  /**
   * A numeric field of the vendor's statistics, by dot path (`by_status.completed`): the one
   * dimension the vendor names. At most 40 of them, `[A-Za-z0-9_.-]`, never a value.
   */
  readonly statistic?: string;
}

/** What core code records metrics through. */
export interface PipelineMetrics {
  record(name: MetricName, value: number, unit: MetricUnitName, dimensions?: MetricDimensions): void;
}

/** Records nothing: for callers that do not measure (unit tests of unrelated behaviour). */
export const NO_METRICS: PipelineMetrics = Object.freeze({ record: () => undefined });

/** One recorded metric, as the in-memory recorder keeps it. */
export interface RecordedMetric {
  readonly name: MetricName;
  readonly value: number;
  readonly unit: MetricUnitName;
  readonly dimensions: MetricDimensions;
}

/** Keeps every metric in memory: the local runner's summary and the tests read it. */
export function createMetricsRecorder(): PipelineMetrics & { readonly recorded: RecordedMetric[] } {
  const recorded: RecordedMetric[] = [];
  return {
    recorded,
    record(name, value, unit, dimensions = {}) {
      recorded.push({ name, value, unit, dimensions: { ...dimensions } });
    },
  };
}

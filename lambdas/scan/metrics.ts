/**
 * The scan workflow's metric names, registered with the platform's metrics (MetricRegistry), so
 * the handlers, alarms and dashboard that use them are type-checked against what is emitted.
 */
export const SCAN_METRIC = {
  scansStarted: 'ScansStarted',
  /**
   * Starts whose answer was lost and that StartScan settled from the vendor's listing, by outcome:
   * `adopted` (the scan the start created), `retried` (none was created; sent again),
   * `unresolved` (recorded as ScanRejected for reconciliation).
   */
  startsSettled: 'StartsSettled',
  /** Starts the vendor throttled past the transport's own wait, waited out by the state machine. */
  startsThrottled: 'StartsThrottled',
  scansSucceeded: 'ScansSucceeded',
  scansFailed: 'ScansFailed',
  scansTimedOut: 'ScansTimedOut',
  scanDuration: 'ScanDurationSeconds',
  /** Scans the vendor ran that reconciliation archived (the workflow never wrote their manifest). */
  scansReconciled: 'ScansReconciled',
  /** Each numeric field of the vendor's `GET /stats`, by its dot path (the `statistic` dimension). */
  vendorStatistic: 'VendorScanStatistic',
  /** Growth of the vendor's count of finished scans since the previous reconciliation read it. */
  vendorFinishedIncrease: 'VendorScansFinishedIncrease',
  /** Growth of the vendor's count of failed scans since the previous reconciliation read it. */
  vendorFailedIncrease: 'VendorScansFailedIncrease',
} as const;

declare module '#lambdas/platform/metrics' {
  interface MetricRegistry {
    scan: (typeof SCAN_METRIC)[keyof typeof SCAN_METRIC];
  }
}

/**
 * The breach workflow's metric names, registered with the platform's metrics (MetricRegistry), so
 * the handlers, alarms and dashboard that use them are type-checked against what is emitted.
 */
export const BREACH_METRIC = {
  /** Recons answered, by outcome (`success`, `no_results`). */
  breachReports: 'BreachReports',
  /** Report ZIPs verified and archived, by origin (`workflow`, `reconciled`). */
  breachArchived: 'BreachReportsArchived',
  /** Report ZIPs refused by the archive check, by the check that failed. */
  archiveVerificationFailures: 'ArchiveVerificationFailures',
  /** Verified report ZIPs kept beside other verified bytes under the same report name, by origin. */
  archiveConflicts: 'ArchiveConflicts',
} as const;

declare module '#lambdas/platform/metrics' {
  interface MetricRegistry {
    breach: (typeof BREACH_METRIC)[keyof typeof BREACH_METRIC];
  }
}

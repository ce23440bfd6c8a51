/**
 * The operations workflow's environment variables, named once: its constructs set them and its
 * handlers read them. docs/contracts.md lists which handler reads which.
 *
 * Plain data with no imports: the CDK app, the handlers and the local runner all load it.
 */
export const OPERATIONS_VARIABLES = {
  /** JSON: where `GET /stats` keeps the finished and failed counts (`scan.reconciliation.statsFields`). */
  vendorStatsFields: 'VENDOR_STATS_FIELDS',
} as const;

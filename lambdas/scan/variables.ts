/**
 * The scan workflow's environment variables, named once: its constructs set them and its handlers
 * read them (a renamed variable is a compile error on both sides). docs/contracts.md lists which
 * handler reads which; the platform's own variables are in lambdas/platform/runtime/variables.ts.
 *
 * Plain data with no imports: the CDK app, the handlers and the local runner all load it.
 */
export const SCAN_VARIABLES = {
  /** JSON: vendor status words per pipeline state. */
  statusVocabulary: 'STATUS_VOCABULARY',
  /** JSON: where `GET /scans` keeps its list and each scan's fields (`scan.reconciliation.listFields`). */
  listFields: 'SCAN_LIST_FIELDS',
  /** The poll loop, one variable per setting of `PollSettings`. */
  poll: {
    minWaitSeconds: 'POLL_MIN_WAIT_SECONDS',
    maxWaitSeconds: 'POLL_MAX_WAIT_SECONDS',
    growthFactor: 'POLL_GROWTH_FACTOR',
    deadlineSeconds: 'SCAN_DEADLINE_SECONDS',
  },
  /** A scan output (report, logs, debug) is cut past this many (decoded) bytes. */
  maxOutputBytes: 'SCAN_MAX_OUTPUT_BYTES',
  /** A content-coded scan output is cut once it decodes to more than this many times its bytes received. */
  maxDecodingRatio: 'SCAN_MAX_DECODING_RATIO',
  /** The per-domain ScanDomain machine (the list summary looks up its executions). */
  stateMachineArn: 'SCAN_STATE_MACHINE_ARN',
  /** JSON: scan reconciliation's horizon, minimum age, match window, budget and field paths. */
  reconciliation: 'SCAN_RECONCILIATION',
} as const;

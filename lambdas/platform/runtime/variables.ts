/**
 * Every environment variable a handler reads, named once. The CDK bindings set them through these
 * names and the handlers read them through the same names, so the two cannot drift apart (a renamed
 * variable is a compile error on both sides). docs/contracts.md lists which handler reads which.
 *
 * Plain data with no imports: the CDK app, the handlers and the local runner all load it.
 */
export const ENV = {
  /** Scan outputs, manifests, failure records and list summaries. */
  resultsBucket: 'RESULTS_BUCKET',
  /** Where domain lists are uploaded. */
  inputBucket: 'INPUT_BUCKET',
  /** Base URLs of the vendor's three APIs. */
  scanApiUrl: 'SCAN_API_URL',
  keysApiUrl: 'KEYS_API_URL',
  breachApiUrl: 'BREACH_API_URL',
  /**
   * Comma-separated origins vendor requests may reach as they are, besides the three base URLs
   * (every other destination must be https to a public address). Unset in a deployment by default.
   */
  vendorAllowedOrigins: 'VENDOR_ALLOWED_ORIGINS',
  /** The organisation's UUID in key-management paths. */
  orgUuid: 'ORG_UUID',
  /** The org key's secret (single mode, or the one API a function calls in per-api mode). */
  vendorKeySecretArn: 'VENDOR_API_KEY_SECRET_ARN',
  /** Per-API key secrets (per-api mode). */
  apiKeySecretArn: {
    scan: 'SCAN_API_KEY_SECRET_ARN',
    keys: 'KEYS_API_KEY_SECRET_ARN',
    breach: 'BREACH_API_KEY_SECRET_ARN',
  },
  /** JSON: vendor status words per pipeline state. */
  statusVocabulary: 'STATUS_VOCABULARY',
  /** JSON: where `GET /scans` keeps its list and each scan's fields (`scan.reconciliation.listFields`). */
  scanListFields: 'SCAN_LIST_FIELDS',
  /** The poll loop, one variable per setting of `PollSettings`. */
  poll: {
    minWaitSeconds: 'POLL_MIN_WAIT_SECONDS',
    maxWaitSeconds: 'POLL_MAX_WAIT_SECONDS',
    growthFactor: 'POLL_GROWTH_FACTOR',
    deadlineSeconds: 'SCAN_DEADLINE_SECONDS',
  },
  /** Comma-separated special-use suffixes scanned anyway. */
  allowSpecialUseDomains: 'ALLOW_SPECIAL_USE_DOMAINS',
  /** Key prefix and suffixes that make an upload a domain list. */
  intakePrefix: 'INTAKE_PREFIX',
  intakeSuffixes: 'INTAKE_SUFFIXES',
  /** A scan output (report, logs, debug) is cut past this many (decoded) bytes. */
  scanMaxOutputBytes: 'SCAN_MAX_OUTPUT_BYTES',
  /** A list object larger than this is refused before it is read. */
  domainListMaxBytes: 'DOMAIN_LIST_MAX_BYTES',
  /** The domain-list machine (intake starts it). */
  domainListStateMachineArn: 'DOMAIN_LIST_STATE_MACHINE_ARN',
  /** The per-domain ScanDomain machine (the list summary looks up its executions). */
  scanStateMachineArn: 'SCAN_STATE_MACHINE_ARN',
  /** A watchlist larger than this is refused before it is read; more people than this are refused. */
  watchlistMaxBytes: 'WATCHLIST_MAX_BYTES',
  watchlistMaxRows: 'WATCHLIST_MAX_ROWS',
  /** Distinct addresses one breach report may cover. */
  breachMaxEmails: 'BREACH_MAX_EMAILS',
  /** A report download is cut past this many (decoded) bytes. */
  breachMaxArchiveBytes: 'BREACH_MAX_ARCHIVE_BYTES',
  /** The archive's entries may inflate to this many bytes in total. */
  breachMaxUncompressedBytes: 'BREACH_MAX_UNCOMPRESSED_BYTES',
  /** An archive entry may inflate at most this many times its compressed size. */
  breachMaxCompressionRatio: 'BREACH_MAX_COMPRESSION_RATIO',
  /** A vendor value larger than this (UTF-8 bytes) is kept in S3 and passed by reference. */
  breachMaxInlineValueBytes: 'BREACH_MAX_INLINE_VALUE_BYTES',
  /** Report archives breach reconciliation starts per run (breach.reconcileMaxArchivesPerRun). */
  breachReconcileMaxArchives: 'BREACH_RECONCILE_MAX_ARCHIVES',
  /** The key of the keyed hash that names people (HMAC), in Secrets Manager. */
  breachIdentityKeySecretArn: 'BREACH_IDENTITY_KEY_SECRET_ARN',
  breachReportNamingKeySecretArn: 'BREACH_REPORT_NAMING_KEY_SECRET_ARN',
  /** The per-person BreachReport machine (watchlist runs start it). */
  breachStateMachineArn: 'BREACH_STATE_MACHINE_ARN',
  /** Dot path of the new key in the vendor's rotate answer; unset searches the common names. */
  newKeyFieldPath: 'NEW_KEY_FIELD_PATH',
  /** How long a rotation claim protects an invocation that may still be calling the vendor. */
  rotationClaimLeaseSeconds: 'ROTATION_CLAIM_LEASE_SECONDS',
  /** How long after the rotate answer a new key may still be refused (rotation.keyPropagationSeconds). */
  rotationKeyPropagationSeconds: 'ROTATION_KEY_PROPAGATION_SECONDS',
  /** Comma-separated ARNs of secrets that get the new value after every rotation. */
  rotationMirrorSecretArns: 'ROTATION_MIRROR_SECRET_ARNS',
  /** The EventBridge bus ApiKeyRotated is published on. */
  eventBusName: 'EVENT_BUS_NAME',
  /** The rotated secret whose age the daily check measures. */
  rotatedSecretArn: 'ROTATED_SECRET_ARN',
  /** The SSM parameter whose value (`running` or `paused`) pauses every intake and schedule. */
  pauseParameterName: 'PAUSE_PARAMETER_NAME',
  /** Comma-separated dead-letter queues whose paused starts the resume function replays. */
  heldStartQueueUrls: 'HELD_START_QUEUE_URLS',
  /** JSON: scan reconciliation's horizon, minimum age, match window, budget and field paths. */
  scanReconciliation: 'SCAN_RECONCILIATION',
  /** Powertools: service name and log level, set by the function defaults. */
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
} as const;

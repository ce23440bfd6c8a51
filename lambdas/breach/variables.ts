/**
 * The breach workflow's environment variables, named once: its constructs set them and its
 * handlers read them. Plain data with no imports (the CDK app, the handlers and the local runner
 * all load it). The watchlist workflow reads the ones contracts.ts re-exports.
 */
export const BREACH_VARIABLES = {
  /** Distinct addresses one breach report may cover. */
  maxEmails: 'BREACH_MAX_EMAILS',
  /** A report download is cut past this many (decoded) bytes. */
  maxArchiveBytes: 'BREACH_MAX_ARCHIVE_BYTES',
  /** The archive's entries may inflate to this many bytes in total. */
  maxUncompressedBytes: 'BREACH_MAX_UNCOMPRESSED_BYTES',
  /** An archive entry may inflate at most this many times its compressed size. */
  maxCompressionRatio: 'BREACH_MAX_COMPRESSION_RATIO',
  /** A vendor value larger than this (UTF-8 bytes) is kept in S3 and passed by reference. */
  maxInlineValueBytes: 'BREACH_MAX_INLINE_VALUE_BYTES',
  /** Report archives breach reconciliation starts per run (breach.reconcileMaxArchivesPerRun). */
  reconcileMaxArchives: 'BREACH_RECONCILE_MAX_ARCHIVES',
  /** The key of the keyed hash that names report folders (HMAC), in Secrets Manager. */
  reportNamingKeySecretArn: 'BREACH_REPORT_NAMING_KEY_SECRET_ARN',
  /** The per-person BreachReport machine (watchlist runs start it). */
  stateMachineArn: 'BREACH_STATE_MACHINE_ARN',
} as const;

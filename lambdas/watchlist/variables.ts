/**
 * The watchlist workflow's environment variables, named once: its constructs set them and its
 * handlers read them. Plain data with no imports (the CDK app, the handlers and the local runner
 * all load it).
 */
export const WATCHLIST_VARIABLES = {
  /** A watchlist larger than this is refused before it is read; more people than this are refused. */
  maxBytes: 'WATCHLIST_MAX_BYTES',
  maxRows: 'WATCHLIST_MAX_ROWS',
  /** The watchlist machine (its intake starts it). */
  stateMachineArn: 'WATCHLIST_STATE_MACHINE_ARN',
  /** The key of the keyed hash that names people (HMAC), in Secrets Manager. */
  identityKeySecretArn: 'BREACH_IDENTITY_KEY_SECRET_ARN',
} as const;

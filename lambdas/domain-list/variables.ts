/**
 * The domain-list workflow's environment variables, named once: its constructs set them and its
 * handlers read them. Plain data with no imports (the CDK app, the handlers and the local runner
 * all load it).
 */
export const DOMAIN_LIST_VARIABLES = {
  /** A list object larger than this is refused before it is read. */
  maxBytes: 'DOMAIN_LIST_MAX_BYTES',
  /** The domain-list machine (its intake starts it). */
  stateMachineArn: 'DOMAIN_LIST_STATE_MACHINE_ARN',
} as const;

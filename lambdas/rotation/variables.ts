/**
 * The rotation workflow's environment variables, named once: its constructs set them and its
 * handlers read them. Plain data with no imports (the CDK app, the handlers and the local runner
 * all load it).
 */
export const ROTATION_VARIABLES = {
  /** Dot path of the new key in the vendor's rotate answer; unset searches the common names. */
  newKeyFieldPath: 'NEW_KEY_FIELD_PATH',
  /** How long a rotation claim protects an invocation that may still be calling the vendor. */
  claimLeaseSeconds: 'ROTATION_CLAIM_LEASE_SECONDS',
  /** How long after the rotate answer a new key may still be refused (rotation.keyPropagationSeconds). */
  keyPropagationSeconds: 'ROTATION_KEY_PROPAGATION_SECONDS',
  /** Comma-separated ARNs of secrets that get the new value after every rotation. */
  mirrorSecretArns: 'ROTATION_MIRROR_SECRET_ARNS',
} as const;

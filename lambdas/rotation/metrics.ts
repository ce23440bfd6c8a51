/**
 * The rotation workflow's metric names, registered with the platform's metrics (MetricRegistry), so
 * the handlers, alarms and dashboard that use them are type-checked against what is emitted.
 */
export const ROTATION_METRIC = {
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
} as const;

declare module '#lambdas/platform/metrics' {
  interface MetricRegistry {
    rotation: (typeof ROTATION_METRIC)[keyof typeof ROTATION_METRIC];
  }
}

/**
 * The rotation function's own failures. Each name is an alarm or a runbook section
 * (docs/runbooks/key-rotation.md); none carries a key.
 */

/**
 * The names these errors carry, written once (a minifier may rename classes, so they are strings,
 * not `Class.name`).
 */
export const ROTATION_ERROR_NAME = {
  /** The vendor rotated the key and the answer, the only copy of the new key, was lost. */
  RotationResponseLost: 'RotationResponseLost',
  RotationInProgressError: 'RotationInProgressError',
  RotationOutcomeUnknownError: 'RotationOutcomeUnknownError',
  NewKeyNotWorkingYetError: 'NewKeyNotWorkingYetError',
  PendingKeyRefusedError: 'PendingKeyRefusedError',
  RotationStateError: 'RotationStateError',
  /** A staging label moved by another invocation before this one could (secret-writer.ts). */
  StageMovedError: 'StageMovedError',
  /** Secrets Manager already holds a different value in the version (secret-writer.ts). */
  VersionConflictError: 'VersionConflictError',
} as const;

/**
 * The vendor rotated the key and no working key is stored: a probe with the current key was refused
 * after a claimed rotate left no stored answer, storing the answer failed for good, or no string in
 * the kept answer opens GET key info. Nobody holds a working key: break-glass recovery (get a key
 * from the vendor, put it in the secret). Rotate is never called again for the token.
 */
export class RotationResponseLostError extends Error {
  constructor(secretId: string, token: string, how: string) {
    super(
      `Rotation ${token} of ${secretId}: the vendor rotated the key but the new key was lost (${how}). Follow the break-glass runbook; rotate was not called again.`,
    );
    this.name = ROTATION_ERROR_NAME.RotationResponseLost;
  }
}

/**
 * Another invocation holds this token: it claimed the rotate and may be calling the vendor right
 * now, or it moved the token's staging labels while this one ran.
 */
export class RotationInProgressError extends Error {
  constructor(secretId: string, token: string, how: string) {
    super(
      `Rotation ${token} of ${secretId} is held by another rotation of the same token (${how}); this invocation changed nothing more and does not rotate again. A later attempt resumes it.`,
    );
    this.name = ROTATION_ERROR_NAME.RotationInProgressError;
  }
}

/** The rotate request may have reached the vendor, and no answer came back intact. */
export class RotationOutcomeUnknownError extends Error {
  constructor(secretId: string, token: string, cause: unknown) {
    super(
      `Rotation ${token} of ${secretId}: the rotate request may have reached the vendor but no answer arrived (${cause instanceof Error ? cause.name : 'error'}). The claim stays; the next attempt probes the current key before anything else.`,
      { cause },
    );
    this.name = ROTATION_ERROR_NAME.RotationOutcomeUnknownError;
  }
}

/**
 * The vendor answered the rotate, the answer is kept, and no key in it works yet, but its
 * propagation window is still open: the invocation ran out of time first. Not a lockout; the next
 * attempt with the same token probes the kept answer again.
 */
export class NewKeyNotWorkingYetError extends Error {
  constructor(secretId: string, token: string, windowEndsAt: string, tried: number) {
    super(
      `Rotation ${token} of ${secretId}: no key in the vendor's kept answer works yet (${tried} tried); it may still be propagating until ${windowEndsAt}. The next attempt probes the answer again; rotate was not called again.`,
    );
    this.name = ROTATION_ERROR_NAME.NewKeyNotWorkingYetError;
  }
}

/** testSecret: the vendor refused the key stored under AWSPENDING. */
export class PendingKeyRefusedError extends Error {
  constructor(secretId: string, token: string, status: number) {
    super(
      `Rotation ${token} of ${secretId}: the vendor refused the pending key with HTTP ${status}; AWSCURRENT was not moved.`,
    );
    this.name = ROTATION_ERROR_NAME.PendingKeyRefusedError;
  }
}

/** Secrets Manager's versions say this step cannot run for this token. */
export class RotationStateError extends Error {
  constructor(secretId: string, token: string, problem: string) {
    super(`Rotation ${token} of ${secretId}: ${problem}`);
    this.name = ROTATION_ERROR_NAME.RotationStateError;
  }
}

/**
 * The rotation function's own failures. Each name is an alarm or a runbook section
 * (docs/runbooks/key-rotation.md); none carries a key.
 */
import { ERROR_NAME } from '#core/errors';

/**
 * The vendor rotated the key and the new key was lost: a probe with the current key was refused
 * after a claimed rotate left no stored answer, or storing the answer failed for good. Nobody holds a
 * working key: break-glass recovery (get a key from the vendor, put it in the secret).
 */
export class RotationResponseLostError extends Error {
  constructor(secretId: string, token: string, how: string) {
    super(
      `Rotation ${token} of ${secretId}: the vendor rotated the key but the new key was lost (${how}). Follow the break-glass runbook; rotate was not called again.`,
    );
    this.name = ERROR_NAME.RotationResponseLost;
  }
}

/** Another invocation holds this token's claim and may be calling the vendor right now. */
export class RotationInProgressError extends Error {
  constructor(secretId: string, token: string, claimedAt: string) {
    super(
      `Rotation ${token} of ${secretId} was claimed at ${claimedAt} by another invocation that may still be calling the vendor; not rotating again. A later attempt resumes it.`,
    );
    this.name = ERROR_NAME.RotationInProgressError;
  }
}

/** The rotate request may have reached the vendor, and no answer came back intact. */
export class RotationOutcomeUnknownError extends Error {
  constructor(secretId: string, token: string, cause: unknown) {
    super(
      `Rotation ${token} of ${secretId}: the rotate request may have reached the vendor but no answer arrived (${cause instanceof Error ? cause.name : 'error'}). The claim stays; the next attempt probes the current key before anything else.`,
      { cause },
    );
    this.name = ERROR_NAME.RotationOutcomeUnknownError;
  }
}

/** The vendor's answer held no key we could find: stored whole under AWSPENDING for a human. */
export class RotateAnswerUnparsableError extends Error {
  constructor(secretId: string, token: string) {
    super(
      `Rotation ${token} of ${secretId}: no key was found in the vendor's rotate answer; the answer is stored whole in the AWSPENDING version under "unreadableRotateAnswer". Set rotation.newKeyFieldPath or recover the key by hand (runbook).`,
    );
    this.name = ERROR_NAME.RotateAnswerUnparsableError;
  }
}

/** testSecret: the vendor refused the key stored under AWSPENDING. */
export class PendingKeyRefusedError extends Error {
  constructor(secretId: string, token: string, status: number) {
    super(
      `Rotation ${token} of ${secretId}: the vendor refused the pending key with HTTP ${status}; AWSCURRENT was not moved.`,
    );
    this.name = ERROR_NAME.PendingKeyRefusedError;
  }
}

/** Secrets Manager's versions say this step cannot run for this token. */
export class RotationStateError extends Error {
  constructor(secretId: string, token: string, problem: string) {
    super(`Rotation ${token} of ${secretId}: ${problem}`);
    this.name = ERROR_NAME.RotationStateError;
  }
}

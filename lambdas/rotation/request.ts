/**
 * The event Secrets Manager invokes the rotation function with, checked before any step runs, and
 * what each step reports: the protocol's vocabulary, which the steps (rotation-step.ts, create.ts) share.
 */
import * as z from 'zod/mini';
import { parseWith } from '#lambdas/platform/input/schema';

export const ROTATION_STEPS = ['createSecret', 'setSecret', 'testSecret', 'finishSecret'] as const;
export type RotationStep = (typeof ROTATION_STEPS)[number];

/** What Secrets Manager sends the rotation function. */
export interface RotationRequest {
  readonly Step: RotationStep;
  readonly SecretId: string;
  readonly ClientRequestToken: string;
}

export type RotationOutcome =
  | 'rotated'
  | 'resumed-from-answer'
  /** The vendor answered the rotate with the key in use: the rotation finishes with it unchanged. */
  | 'key-unchanged'
  | 'already-stored'
  | 'stored-by-peer'
  | 'nothing-to-set'
  | 'pending-key-works'
  /** testSecret as Secrets Manager's configuration test, on a secret nobody stored a key in yet. */
  | 'not-seeded'
  /** testSecret as the configuration test of a schedule changed after seeding: AWSCURRENT's key works. */
  | 'current-key-works'
  | 'finished'
  | 'already-finished';

const rotationRequestSchema = z.object({
  Step: z.enum(ROTATION_STEPS, { error: `must be one of ${ROTATION_STEPS.join(', ')}` }),
  SecretId: z.string().check(z.minLength(1, 'must be the secret ARN')),
  // Secrets Manager's version ids are 32 to 64 characters.
  ClientRequestToken: z.string().check(z.minLength(32), z.maxLength(64)),
});

/** Throws InvalidInputError naming the field (`Step`, `SecretId`, `ClientRequestToken`). */
export function parseRotationRequest(event: unknown): RotationRequest {
  return parseWith(rotationRequestSchema, event, 'event');
}

/** The event Secrets Manager invokes the rotation function with, checked before any step runs. */
import * as z from 'zod/mini';
import { parseWith } from '#lambdas/platform/schema';
import { ROTATION_STEPS, type RotationRequest } from './steps.ts';

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

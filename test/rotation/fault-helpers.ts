/** Ways the rotation tests break one Secrets Manager or vendor call, and what they check after. */
import { expect } from 'vitest';
import { invariantHolds, keyState, LEASE_MS, type RotationWorld } from './harness.ts';

export const isClaimPut = (input: Record<string, unknown>) =>
  String(input.ClientRequestToken ?? '').startsWith('claim-') &&
  !String(input.SecretString).includes('"released"');
export const isPendingPut = (input: Record<string, unknown>) =>
  (input.VersionStages as string[] | undefined)?.includes('AWSPENDING') === true;
export const isAnswerPut = (input: Record<string, unknown>) =>
  (input.VersionStages as string[] | undefined)?.includes('ROTATION-ANSWER') === true;

/** Fails the first matching call once, before or after it is applied. */
export function failOnce(
  w: RotationWorld,
  operation: string,
  phase: 'before' | 'after',
  matches: (input: Record<string, unknown>) => boolean,
  error: () => Error,
  times = 1,
): void {
  let left = times;
  w.onSecretsCall((call) => {
    if (left > 0 && call.operation === operation && call.phase === phase && matches(call.input)) {
      left -= 1;
      throw error();
    }
  });
}

/** Rotation attempts until one finishes or `max` ran; the invariant is checked after each. */
export async function attemptUntilFinished(w: RotationWorld, max: number) {
  const errors: unknown[] = [];
  for (let i = 0; i < max; i++) {
    const run = await w.rotate();
    if (run.error !== undefined) errors.push(run.error);
    expect(invariantHolds(w, errors), `invariant after attempt ${i + 1}`).toBe(true);
    if (run.error === undefined) return { run, errors, attempts: i + 1 };
    w.advance(LEASE_MS + 1_000);
  }
  return { run: undefined, errors, attempts: max };
}

/** `GET key info` answers 503 for longer than the client's retries: testSecret fails. */
export function keyInfoUnavailable(w: RotationWorld): void {
  w.sim.addFault({
    api: 'keys',
    method: 'GET',
    path: /\/api\/key$/,
    times: 2,
    fault: { type: 'status', status: 503 },
  });
}

export function expectFinished(w: RotationWorld): void {
  expect(keyState(w).stored).toBe('current');
  const stages = Object.values(w.store.stagesOf(w.secretId)).flat();
  expect(stages).not.toContain('AWSPENDING');
  expect(stages).not.toContain('ROTATION-CLAIM');
  expect(stages.filter((s) => s === 'AWSCURRENT')).toHaveLength(1);
}

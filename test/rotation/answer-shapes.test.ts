/**
 * The rotate answer's shape is not shown by the seeds. Table-driven from adversarial answers the
 * simulator gives (local/simulator/rotate-answers.ts): wherever the key is, the rotation ends with
 * the working key in AWSCURRENT; with no key in the answer, it ends in RotationResponseLost with the
 * raw answer kept in the secret. Exactly one rotate at the vendor either way, and no key in a log.
 * Also: every step refuses a token whose version is not AWSPENDING, and finishSecret never promotes a
 * key the vendor refuses.
 */
import { RotateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { ROTATION_STEPS } from '#lambdas/rotation/request';
import { runRotationStep } from '#lambdas/rotation/rotation-step';
import type { RotateAnswerShape } from '#local/simulator/rotate-answers';
import {
  invariantHolds,
  keptAnswer,
  LEASE_MS,
  ROTATE_ROUTE,
  ROTATION_FUNCTION_ARN,
  type RotationWorld,
  useRotationWorlds,
} from './harness.ts';

const setUp = useRotationWorlds();

const stagesFlat = (w: RotationWorld) => Object.values(w.store.stagesOf(w.secretId)).flat();
const apiKeyAt = (w: RotationWorld, stage: string) =>
  (JSON.parse(w.store.valueAt(w.secretId, stage) ?? '{}') as { apiKey?: string }).apiKey;

const WITH_KEY: readonly [RotateAnswerShape, string][] = [
  ['default', 'api_key at the top, as the simulator answers by default'],
  ['id-under-key', 'the key id under "key", the key under "secret"'],
  ['decoy-first', 'a well-formed but dead key under "api_key", the key under data.api_key'],
  ['nested', 'data.credentials.value'],
  ['array', 'inside an array of arrays'],
  ['odd-name', 'only in a field with an odd name'],
  ['json-string', 'inside a JSON document held in a string field'],
  ['plain-text', 'in a text/plain body'],
];

describe('rotate answers whose key is anywhere', () => {
  it.each(WITH_KEY)('%s (%s): the working key ends in AWSCURRENT, one rotate', async (shape) => {
    // Prepare
    const w = await setUp();
    w.sim.addFault({ api: 'keys', fault: { type: 'rotate-answer', shape } });
    const oldKey = w.sim.apiKey;

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(w.sim.apiKey).not.toBe(oldKey);
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(w.sim.apiKey);
    expect(stagesFlat(w)).not.toContain('AWSPENDING');
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    const current = JSON.parse(w.store.valueAt(w.secretId, 'AWSCURRENT') ?? '{}');
    expect(current.rotateAnswer.body).toContain(w.sim.apiKey);
    expect(JSON.stringify([w.logger.lines, w.store.calls, w.events])).not.toContain(w.sim.apiKey);
  });
});

describe('a rotate answer without the key', () => {
  it('ends in RotationResponseLost with the raw answer kept, and never rotates again', async () => {
    // Prepare
    const w = await setUp();
    w.sim.addFault({ api: 'keys', fault: { type: 'rotate-answer', shape: 'no-key' } });
    const errors: unknown[] = [];

    // Act: the first attempt and two later ones, as Secrets Manager retries.
    for (let i = 0; i < 3; i++) {
      const run = await w.rotate();
      if (run.error !== undefined) errors.push(run.error);
      w.advance(LEASE_MS + 1_000);
    }

    // Assess
    expect(errors.map((e) => (e as Error).name)).toEqual([
      'RotationResponseLost',
      'RotationResponseLost',
      'RotationResponseLost',
    ]);
    expect(invariantHolds(w, errors)).toBe(true);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    // AWSPENDING gets a value only with a key that works; the answer is kept in its own version.
    expect(w.store.valueAt(w.secretId, 'AWSPENDING')).toBeUndefined();
    expect(JSON.parse(keptAnswer(w).body)).toMatchObject({ message: expect.any(String) });
    expect(w.metrics.recorded.map((m) => m.name)).toEqual(
      expect.arrayContaining(['RotationResponseLost', 'RotateAnswerUnparsable']),
    );
    expect((errors[0] as Error).message).toMatch(/ROTATION-ANSWER/);
  });

  it('keeps an oversized answer within the 65,536-byte secret, cut and marked so', async () => {
    // Prepare: an answer of 200 kB of quotes (each grows to two bytes when JSON-escaped) and no key.
    const w = await setUp();
    const body = JSON.stringify({ message: 'rotated', filler: '"'.repeat(200_000) });
    w.sim.addFault({
      api: 'keys',
      method: 'POST',
      path: /\/rotate$/,
      fault: { type: 'status', status: 200, body, contentType: 'application/json' },
    });

    // Act
    const run = await w.rotate();

    // Assess: the status fault answered instead of the vendor, so nothing was rotated there; the
    // function cannot know that and keeps what it got.
    expect((run.error as Error).name).toBe('RotationResponseLost');
    const stored = w.store.valueAt(w.secretId, 'ROTATION-ANSWER') ?? '';
    expect(Buffer.byteLength(stored, 'utf8')).toBeLessThanOrEqual(65_536);
    const kept = keptAnswer(w);
    expect(kept).toMatchObject({ truncated: true, bodyBytes: Buffer.byteLength(body) });
    expect(body.startsWith(kept.body)).toBe(true);
  });
});

describe('the token must name the AWSPENDING version', () => {
  it.each(ROTATION_STEPS)('%s refuses a stale token and changes nothing', async (step) => {
    // Prepare: one finished rotation, then a second one left pending; the first token is stale.
    const w = await setUp();
    const first = await w.rotate();
    await w.rotate();
    const stale = Object.entries(w.store.stagesOf(w.secretId)).find(([, s]) =>
      s.includes('AWSPREVIOUS'),
    )?.[0];
    const before = w.store.stagesOf(w.secretId);
    const rotates = w.sim.requestCount(ROTATE_ROUTE);

    // Act
    const act = runRotationStep(
      { Step: step, SecretId: w.secretId, ClientRequestToken: stale ?? '' },
      w.deps,
    );

    // Assess
    expect(stale).toBe(first.token);
    await expect(act).rejects.toMatchObject({ name: 'RotationStateError', message: /not staged AWSPENDING/ });
    expect(w.store.stagesOf(w.secretId)).toEqual(before);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(rotates);
  });

  it('finishSecret never moves AWSCURRENT to a pending key the vendor refuses', async () => {
    // Prepare: the rotation stores its key, then the vendor replaces it out of band.
    const w = await setUp();
    await w.rotate();
    const started = await w.client.send(
      new RotateSecretCommand({ SecretId: w.secretId, RotationLambdaARN: ROTATION_FUNCTION_ARN }),
    );
    const token = started.VersionId ?? '';
    await runRotationStep({ Step: 'createSecret', SecretId: w.secretId, ClientRequestToken: token }, w.deps);
    w.sim.replaceKey();
    const currentBefore = w.store.valueAt(w.secretId, 'AWSCURRENT');

    // Act: finishSecret without a passing testSecret (as a stray invocation would).
    const act = runRotationStep(
      { Step: 'finishSecret', SecretId: w.secretId, ClientRequestToken: token },
      w.deps,
    );

    // Assess
    await expect(act).rejects.toMatchObject({ name: 'PendingKeyRefusedError' });
    expect(w.store.valueAt(w.secretId, 'AWSCURRENT')).toBe(currentBefore);
    expect(w.store.stagesOf(w.secretId)[token]).toEqual(['AWSPENDING']);
  });
});

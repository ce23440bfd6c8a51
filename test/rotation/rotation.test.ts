/**
 * The rotation function's four steps against the vendor simulator over loopback and the stateful
 * Secrets Manager stand-in, with a fault at every boundary. After every attempt the invariant is
 * checked: the key that works at the vendor is stored (AWSCURRENT or AWSPENDING), or a named,
 * counted RotationResponseLost says it is not.
 */
import { RotateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { createSecretsManagerReader, credentialProviderFromSecret } from '#lambdas/platform/secrets';
import { VENDOR_APIS } from '#lambdas/registry';
import { runRotationStep } from '#lambdas/rotation/rotation-step';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { driveRotation } from '#local/runner/rotation-driver';
import {
  attemptUntilFinished,
  expectFinished,
  failOnce,
  isAnswerPut,
  isClaimPut,
  isPendingPut,
  keyInfoUnavailable,
} from './fault-helpers.ts';
import {
  KEY_INFO_ROUTE,
  keptAnswer,
  keyState,
  LEASE_MS,
  ROTATE_ROUTE,
  SimulatedCrash,
  throttling,
  useRotationWorlds,
} from './harness.ts';

const setUp = useRotationWorlds();

describe('key rotation, happy path', () => {
  it('runs the four steps, promotes the new key, keeps the other fields and tells dependents', async () => {
    // Prepare
    const w = await setUp();
    const oldKey = w.sim.apiKey;

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(run.steps.map((s) => s.outcome)).toEqual([
      'rotated',
      'nothing-to-set',
      'pending-key-works',
      'finished',
    ]);
    expect(w.sim.apiKey).not.toBe(oldKey);
    expectFinished(w);
    const current = JSON.parse(w.store.valueAt(w.secretId, 'AWSCURRENT') ?? '{}');
    expect(current).toEqual({
      apiKey: w.sim.apiKey,
      orgUuid: w.sim.orgUuid,
      note: 'kept across rotations',
      // The vendor's answer, whole, beside the key the readers use.
      rotateAnswer: {
        status: 200,
        body: expect.stringContaining(w.sim.apiKey),
        contentType: expect.stringMatching(/json/),
        truncated: false,
        bodyBytes: expect.any(Number),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    });
    expect(w.store.valueAt(w.secretId, 'AWSPREVIOUS')).toContain(oldKey);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expect(w.events).toEqual([
      { orgUuid: w.sim.orgUuid, secretArn: w.secretId, versionId: run.token, rotatedAt: expect.any(String) },
    ]);
    expect(w.metrics.recorded.map((m) => m.name)).toEqual(
      expect.arrayContaining(['KeyRotations', 'RotationWindowSeconds']),
    );
    // No key in a log line, an event or a Secrets Manager call record.
    const everything = JSON.stringify([w.logger.lines, w.events, w.store.calls, w.metrics.recorded]);
    for (const key of [oldKey, w.sim.apiKey]) expect(everything).not.toContain(key);
  });

  it('is a no-op when finishSecret is invoked again for a finished token', async () => {
    // Prepare
    const w = await setUp();
    const run = await w.rotate();

    // Act
    const again = await runRotationStep(
      { Step: 'finishSecret', SecretId: w.secretId, ClientRequestToken: run.token },
      w.deps,
    );
    const create = await runRotationStep(
      { Step: 'createSecret', SecretId: w.secretId, ClientRequestToken: run.token },
      w.deps,
    );

    // Assess
    expect(again.outcome).toBe('already-finished');
    expect(create.outcome).toBe('already-finished');
    expect(w.events).toHaveLength(1);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
  });

  it('writes and verifies every mirror secret with the new value', async () => {
    // Prepare: a mirror an integration reads, created by the same stand-in
    const w = await setUp();
    const { CreateSecretCommand } = await import('@aws-sdk/client-secrets-manager');
    const mirror = await w.client.send(
      new CreateSecretCommand({ Name: 'integration/key', SecretString: '{}' }),
    );
    Object.assign(w.deps.settings, { mirrorSecretIds: [mirror.ARN as string] });

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.steps.at(-1)?.followUps).toEqual({
      eventPublished: true,
      mirrorsWritten: 1,
      mirrorsFailed: 0,
    });
    expect(w.store.valueAt(mirror.ARN as string, 'AWSCURRENT')).toContain(w.sim.apiKey);
  });

  it('counts and logs a mirror that cannot be written, without undoing the rotation', async () => {
    // Prepare
    const w = await setUp();
    Object.assign(w.deps.settings, {
      mirrorSecretIds: ['arn:aws:secretsmanager:eu-west-1:000000000000:secret:gone-abc123'],
    });

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expectFinished(w);
    expect(run.steps.at(-1)?.followUps).toMatchObject({ mirrorsWritten: 0, mirrorsFailed: 1 });
    expect(w.metrics.recorded.filter((m) => m.name === 'MirrorWriteFailures')).toHaveLength(1);
    expect(w.logger.lines.some((l) => l.level === 'error' && l.fields.mirrorSecretId !== undefined)).toBe(
      true,
    );
  });
});

describe('key rotation, a fault at every boundary', () => {
  it('a crash before the claim: nothing happened at the vendor, the next attempt rotates once', async () => {
    const w = await setUp();
    failOnce(w, 'PutSecretValue', 'before', isClaimPut, () => new SimulatedCrash('before the claim'));
    const { errors, attempts } = await attemptUntilFinished(w, 3);
    expect(errors.map((e) => (e as Error).name)).toEqual(['SimulatedCrash']);
    expect(attempts).toBe(2);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
  });

  it('a crash after the claim, before the vendor call: waits out the lease, probes, rotates once', async () => {
    const w = await setUp();
    failOnce(w, 'PutSecretValue', 'after', isClaimPut, () => new SimulatedCrash('after the claim'));
    const first = await w.rotate();
    // Within the lease the claim's owner may still be calling the vendor: never rotate then.
    const second = await w.rotate();
    expect((first.error as Error).name).toBe('SimulatedCrash');
    expect((second.error as Error).name).toBe('RotationInProgressError');
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(0);
    w.advance(LEASE_MS + 1_000);
    const probesBefore = w.sim.requestCount(KEY_INFO_ROUTE);
    const third = await w.rotate();
    expect(third.error).toBeUndefined();
    // The current key's probe, the answer's first candidate, testSecret, finishSecret's re-test.
    expect(w.sim.requestCount(KEY_INFO_ROUTE) - probesBefore).toBe(4);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
  });

  it('a crash after the vendor call, before the answer is kept: a named, counted lockout and never a second rotate', async () => {
    const w = await setUp();
    failOnce(w, 'PutSecretValue', 'before', isAnswerPut, () => new SimulatedCrash('before the put'));
    const { errors } = await attemptUntilFinished(w, 3);
    expect(errors.map((e) => (e as Error).name)).toEqual([
      'RotationResponseLost',
      'RotationResponseLost',
      'RotationResponseLost',
    ]);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expect(w.metrics.recorded.filter((m) => m.name === 'RotationResponseLost').length).toBeGreaterThanOrEqual(
      1,
    );
  });

  it('a crash after the answer is kept, before the pending put: the next attempt resumes from the answer', async () => {
    const w = await setUp();
    failOnce(w, 'PutSecretValue', 'before', isPendingPut, () => new SimulatedCrash('before the pending put'));
    const first = await w.rotate();
    expect((first.error as Error).name).toBe('SimulatedCrash');
    expect(keyState(w).stored).toBe('kept-answer');
    const second = await w.rotate();
    expect(second.error).toBeUndefined();
    expect(second.steps[0]?.outcome).toBe('resumed-from-answer');
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
    expect(Object.values(w.store.stagesOf(w.secretId)).flat()).not.toContain('ROTATION-ANSWER');
  });

  it('a throttled put that then succeeds: retried with backoff, the rotation finishes', async () => {
    const w = await setUp();
    failOnce(w, 'PutSecretValue', 'before', isPendingPut, throttling, 2);
    const run = await w.rotate();
    expect(run.error).toBeUndefined();
    expect(
      w.store.calls.filter((c) => c.operation === 'PutSecretValue' && c.failed === 'ThrottlingException'),
    ).toHaveLength(2);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
  });

  it('a put whose answer is lost after it was applied: found stored, not called lost', async () => {
    const w = await setUp();
    failOnce(w, 'PutSecretValue', 'after', isPendingPut, () => new SimulatedCrash('answer of the put'));
    const run = await w.rotate();
    expect(run.error).toBeUndefined();
    expect(w.metrics.recorded.some((m) => m.name === 'RotationResponseLost')).toBe(false);
    expectFinished(w);
  });

  it('a crash after the put, before testSecret: the next attempt finds the stored key and finishes', async () => {
    const w = await setUp();
    let crashed = false;
    const first = await driveRotation(w.client, w.secretId, async (request) => {
      if (request.Step === 'testSecret' && !crashed) {
        crashed = true;
        throw new SimulatedCrash('before testSecret');
      }
      return runRotationStep(request, w.deps);
    });
    expect(keyState(w).stored).toBe('pending');
    const second = await w.rotate();
    expect(first.error).toBeInstanceOf(SimulatedCrash);
    expect(second.resumed).toBe(true);
    expect(second.token).toBe(first.token);
    expect(second.steps[0]?.outcome).toBe('already-stored');
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
  });

  it('testSecret failing: the key stays pending (readers fall back to it), the next attempt finishes', async () => {
    const w = await setUp();
    // The rotate succeeds, then key info is unavailable for longer than the client's retries.
    const first = await driveRotation(w.client, w.secretId, async (request) => {
      if (request.Step === 'testSecret') keyInfoUnavailable(w);
      return runRotationStep(request, w.deps);
    });
    expect((first.error as Error).name).toBe('VendorUnavailableError');
    expect(keyState(w).stored).toBe('pending');
    // A scan started now still works: the reader re-reads AWSCURRENT, then tries AWSPENDING.
    const reader = createSecretsManagerReader({ client: w.client, maxAgeSeconds: 3600 });
    const scans = new ScanClient({
      baseUrl: w.sim.url,
      credentials: credentialProviderFromSecret(reader, w.secretId, { api: 'scan', apis: VENDOR_APIS }),
    });
    await expect(scans.getStats()).resolves.toMatchObject({ raw: expect.anything() });
    await scans.close();
    const second = await w.rotate();
    expect(second.error).toBeUndefined();
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
  });

  it('finishSecret failing: AWSCURRENT not moved, the pending key works, the next attempt finishes once', async () => {
    const w = await setUp();
    failOnce(
      w,
      'UpdateSecretVersionStage',
      'before',
      (input) => input.VersionStage === 'AWSCURRENT',
      () => Object.assign(new Error('denied'), { name: 'AccessDeniedException' }),
    );
    const first = await w.rotate();
    expect((first.error as Error).name).toBe('ConfigurationError');
    expect(keyState(w).stored).toBe('pending');
    expect(w.events).toHaveLength(0);
    const second = await w.rotate();
    expect(second.error).toBeUndefined();
    expect(w.events).toHaveLength(1);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
  });

  it("the vendor's answer lost after the key changed: probed at once, a named lockout, never a second rotate", async () => {
    const w = await setUp();
    w.sim.addFault({ api: 'keys', method: 'POST', path: /\/rotate$/, fault: { type: 'lose-response' } });
    const { errors } = await attemptUntilFinished(w, 2);
    expect(errors.map((e) => (e as Error).name)).toEqual(['RotationResponseLost', 'RotationResponseLost']);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expect(w.metrics.recorded.some((m) => m.name === 'RotationResponseLost')).toBe(true);
  });

  it('a configured path that names nothing: the other strings are probed, the key is found', async () => {
    const w = await setUp({ newKeyFieldPath: 'data.secret' });
    const run = await w.rotate();
    expect(run.error).toBeUndefined();
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
  });

  it('a configured path is probed first', async () => {
    const w = await setUp({ newKeyFieldPath: 'data.api_key' });
    w.sim.addFault({ api: 'keys', fault: { type: 'rotate-answer', shape: 'decoy-first' } });
    const probesBefore = w.sim.requestCount(KEY_INFO_ROUTE);
    const run = await w.rotate();
    expect(run.error).toBeUndefined();
    // One probe finds it (the decoy under api_key is never tried), then testSecret and finishSecret.
    expect(w.sim.requestCount(KEY_INFO_ROUTE) - probesBefore).toBe(3);
    expectFinished(w);
  });

  it('a malformed JSON answer without the whole key: kept in the secret, a named lockout, never rotated again', async () => {
    const w = await setUp();
    w.sim.addFault({ api: 'keys', method: 'POST', path: /\/rotate$/, fault: { type: 'malformed-json' } });
    const { errors } = await attemptUntilFinished(w, 2);
    expect(errors.map((e) => (e as Error).name)).toEqual(['RotationResponseLost', 'RotationResponseLost']);
    // AWSPENDING gets a value only with a key that works; the answer is kept in its own version.
    expect(w.store.valueAt(w.secretId, 'AWSPENDING')).toBeUndefined();
    expect(keptAnswer(w).body.length).toBeGreaterThan(0);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
  });

  it('two overlapping invocations for one token: one rotate, both end in the stored key', async () => {
    const w = await setUp();
    const started = await w.client.send(
      new RotateSecretCommand({
        SecretId: w.secretId,
        RotationLambdaARN: 'arn:aws:lambda:eu-west-1:000000000000:function:f',
      }),
    );
    const request = {
      Step: 'createSecret',
      SecretId: w.secretId,
      ClientRequestToken: started.VersionId as string,
    } as const;
    const outcomes = await Promise.allSettled([
      runRotationStep(request, w.deps),
      runRotationStep(request, w.deps),
    ]);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expect(outcomes.filter((o) => o.status === 'fulfilled' && o.value.outcome === 'rotated')).toHaveLength(1);
    const other = outcomes.find((o) => !(o.status === 'fulfilled' && o.value.outcome === 'rotated'));
    const otherOutcome =
      other === undefined
        ? 'missing'
        : other.status === 'fulfilled'
          ? other.value.outcome
          : (other.reason as Error).name;
    expect(otherOutcome).toMatch(/stored-by-peer|RotationInProgressError/);
    const rest = await w.rotate();
    expect(rest.error).toBeUndefined();
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
  });

  it('a second token while one is pending: refused by Secrets Manager, the first token is resumed', async () => {
    const w = await setUp();
    const first = await driveRotation(w.client, w.secretId, async (request) => {
      if (request.Step === 'testSecret') keyInfoUnavailable(w);
      return runRotationStep(request, w.deps);
    });
    const second = w.client.send(new RotateSecretCommand({ SecretId: w.secretId }));
    await expect(second).rejects.toMatchObject({
      name: 'InvalidRequestException',
      message: expect.stringContaining("previous rotation isn't complete"),
    });
    const resumed = await w.rotate();
    expect(resumed.token).toBe(first.token);
    expect(resumed.error).toBeUndefined();
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expectFinished(w);
  });

  it('refuses a malformed event with an error that names the field', async () => {
    const w = await setUp();
    const { parseRotationRequest } = await import('#lambdas/rotation/request');
    expect(() =>
      parseRotationRequest({ Step: 'dropSecret', SecretId: w.secretId, ClientRequestToken: 'x'.repeat(36) }),
    ).toThrow(/Step/);
    expect(() =>
      parseRotationRequest({ Step: 'createSecret', SecretId: w.secretId, ClientRequestToken: 'short' }),
    ).toThrow(/ClientRequestToken/);
  });
});

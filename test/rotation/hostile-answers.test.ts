/**
 * The rotate call is the one call that cannot be repeated, so its answer has its own rules (issue
 * 32): read to its end within the invocation's time however slow or large, every key-shaped word
 * of it kept, and a key that does not work yet probed again over a propagation window and on every
 * later attempt. Driven in-process against the simulator, whose clock is the test's, so a key
 * refused for a minute costs no real minute; the bundled function meets the same faults in
 * bundled-function.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ROTATION_METRIC } from '#lambdas/registry';
import { answerVersionId } from '#lambdas/rotation/answer';
import { runRotationStep } from '#lambdas/rotation/rotation-step';
import { driveRotation } from '#local/runner/rotation-driver';
import type { RotateAnswerFault } from '#local/simulator/rotate-answers';
import { expectFinished } from './fault-helpers.ts';
import { LEASE_MS, ROTATE_ROUTE, type RotationWorld, useRotationWorlds } from './harness.ts';

const setUp = useRotationWorlds();
const WINDOW_MS = 60_000;

function hostileWorld(fault: RotateAnswerFault) {
  return setUp({ keyPropagationMs: WINDOW_MS, vendorOnTestClock: true }).then((w) => {
    w.sim.addFault({ api: 'keys', fault: { type: 'rotate-answer', ...fault } });
    return w;
  });
}

const metricNames = (w: RotationWorld) => w.metrics.recorded.map((m) => m.name);
const apiKeyAt = (w: RotationWorld, stage: string) =>
  (JSON.parse(w.store.valueAt(w.secretId, stage) ?? '{}') as { apiKey?: string }).apiKey;

describe('a rotate answer that is slow, large, lagging or crowded still ends with the working key current', () => {
  it.each<[string, RotateAnswerFault]>([
    ['a new key refused for 50 s, within the 60 s window', { shape: 'default', delaySeconds: 50 }],
    ['a 9 MiB answer with the key near its start', { shape: 'huge' }],
    ['a 9 MiB answer with the key at its very end', { shape: 'huge', keyAt: 'end' }],
    ['an answer trickled over 3 s, past the 2 s per-request deadline', { shape: 'slow', trickleSeconds: 3 }],
    ['30 key-shaped decoys before the key', { shape: 'decoy-first', decoys: 30 }],
  ])('%s: one rotate, the key in AWSCURRENT', async (_case, fault) => {
    // Prepare
    const w = await hostileWorld(fault);
    const oldKey = w.sim.apiKey;

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(w.sim.apiKey).not.toBe(oldKey);
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(w.sim.apiKey);
    expectFinished(w);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
    expect(metricNames(w)).not.toContain(ROTATION_METRIC.rotationResponseLost);
    expect(JSON.stringify([w.logger.lines, w.events])).not.toContain(w.sim.apiKey);
  });

  it('keeps a 9 MiB answer within a secret: its head, its size and hash, and the key from its far end', async () => {
    // Prepare
    const w = await hostileWorld({ shape: 'huge', keyAt: 'end' });

    // Act
    const run = await w.rotate();

    // Assess: the answer's version (its label is gone once the key is current) and AWSCURRENT.
    expect(run.error).toBeUndefined();
    const stored = await w.deps.secrets.read(w.secretId, { versionId: answerVersionId(run.token) });
    expect(Buffer.byteLength(stored?.value ?? '')).toBeLessThanOrEqual(65_536);
    for (const kept of [
      JSON.parse(stored?.value ?? '{}').rotateAnswer,
      JSON.parse(w.store.valueAt(w.secretId, 'AWSCURRENT') ?? '{}').rotateAnswer,
    ]) {
      expect(kept).toMatchObject({ truncated: true, bodyBytes: 9 * 1024 * 1024 });
      expect(kept.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(kept.body.length).toBeGreaterThan(16_000);
      expect(kept.body).not.toContain(w.sim.apiKey);
      expect(kept.candidates).toContain(w.sim.apiKey);
    }
  });

  it('probes every decoy, and logs how many it tried', async () => {
    // Prepare
    const w = await hostileWorld({ shape: 'decoy-first', decoys: 30 });

    // Act
    await w.rotate();

    // Assess: 30 decoys, then the key.
    const settled = w.logger.lines.find((line) => line.message.startsWith('the vendor rotated the key'));
    expect(settled?.fields).toMatchObject({ candidatesTried: 31, probeRounds: 1 });
  });
});

describe('the vendor hands back the key in use', () => {
  it('finishes cleanly with that key, counts RotateKeyUnchanged, and leaves no AWSPENDING', async () => {
    // Prepare
    const w = await hostileWorld({ shape: 'same-key' });
    const key = w.sim.apiKey;

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(run.steps[0]?.outcome).toBe('key-unchanged');
    expect(w.sim.apiKey).toBe(key);
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(key);
    expectFinished(w);
    expect(metricNames(w)).toContain(ROTATION_METRIC.rotateKeyUnchanged);
    expect(metricNames(w)).not.toContain(ROTATION_METRIC.keyRotations);
    expect(metricNames(w)).not.toContain(ROTATION_METRIC.rotationResponseLost);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);

    // A later rotation is not blocked by it.
    const next = await w.rotate();
    expect(next.error).toBeUndefined();
    expect(w.sim.apiKey).not.toBe(key);
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(w.sim.apiKey);
  });
});

describe('a key that works only after the window', () => {
  it('is a lockout at the end of the window, and a later attempt that finds it finishes without a second rotate', async () => {
    // Prepare: the new key is refused for 90 s, the window is 60 s.
    const w = await hostileWorld({ shape: 'default', delaySeconds: 90 });

    // Act
    const first = await w.rotate();
    const lockedOut = {
      error: (first.error as Error | undefined)?.name,
      pending: w.store.valueAt(w.secretId, 'AWSPENDING'),
      metrics: metricNames(w),
    };
    w.advance(LEASE_MS);
    const second = await w.rotate();

    // Assess
    expect(lockedOut.error).toBe('RotationResponseLost');
    // AWSPENDING is written only with a key that works: the later attempt can still write one.
    expect(lockedOut.pending).toBeUndefined();
    expect(lockedOut.metrics).toEqual(
      expect.arrayContaining([ROTATION_METRIC.rotationResponseLost, ROTATION_METRIC.rotateAnswerUnparsable]),
    );
    expect(second.resumed).toBe(true);
    expect(second.token).toBe(first.token);
    expect(second.error).toBeUndefined();
    expect(second.steps[0]?.outcome).toBe('resumed-from-answer');
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(w.sim.apiKey);
    expectFinished(w);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
  });

  it('an invocation that runs out of time inside the window is no lockout: the next attempt probes again', async () => {
    // Prepare: 30 s left in the invocation (20 s of them kept back), a key refused for 40 s.
    const w = await hostileWorld({ shape: 'default', delaySeconds: 40 });
    const shortInvocation = { getRemainingTimeInMillis: () => 30_000 };
    const invoke = () =>
      driveRotation(w.client, w.secretId, (request) => runRotationStep(request, w.deps, shortInvocation));

    // Act
    const first = await invoke();
    const probedBy = w.now.ms;
    w.advance(35_000);
    const second = await invoke();

    // Assess
    expect((first.error as Error | undefined)?.name).toBe('NewKeyNotWorkingYetError');
    expect(metricNames(w)).not.toContain(ROTATION_METRIC.rotationResponseLost);
    expect(probedBy - Date.parse('2026-11-01T00:00:00Z')).toBeLessThanOrEqual(11_000);
    expect(second.error).toBeUndefined();
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(w.sim.apiKey);
    expectFinished(w);
    expect(w.sim.requestCount(ROTATE_ROUTE)).toBe(1);
  });
});

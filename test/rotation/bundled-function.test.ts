/**
 * The rotation function as it ships: rotate-api-key bundled by esbuild with the CDK app's options,
 * wired from its environment (Secrets Manager and EventBridge through the bundled SDK, the vendor's
 * key API at KEYS_API_URL) and invoked with a Lambda-like context whose remaining time runs down.
 * Secrets Manager's part is played as the service plays it (local/runner/rotation-driver.ts: RotateSecret,
 * then createSecret, setSecret, testSecret and finishSecret with one token, the same token again on
 * a later attempt), against the Secrets Manager stand-in and the vendor simulator over loopback.
 *
 * Real time here: the propagation window is 4 s (ROTATION_KEY_PROPAGATION_SECONDS) and the faults
 * are scaled to it. The slow answer trickles for 3 s, not 35: the bundle's per-request deadline
 * is the 30 s default, so what this proves is that the bundle reads a trickled answer whole;
 * hostile-answers.test.ts proves an answer outlasting the per-request deadline (2 s there) is read
 * whole, and `npm start -- rotate --fault rotate-answer=slow` shows the 35 s one.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import type { RotateAnswerFault } from '#local/simulator/rotate-answers';
import { type BundledWorld, startBundledWorld } from './bundled-world.ts';
import { ROTATE_ROUTE } from './harness.ts';

const WINDOW_SECONDS = 4;

let sim: VendorSimulator;
let world: BundledWorld;

beforeAll(async () => {
  [sim, world] = await Promise.all([startVendorSimulator({ pollsToFinish: 0 }), startBundledWorld()]);
}, 120_000);

beforeEach(() => {
  world.stubEnvironment({ keysApiUrl: sim.url, orgUuid: sim.orgUuid }, WINDOW_SECONDS);
});

afterAll(async () => {
  await Promise.all([sim?.close(), world?.close()]);
});

/** A secret holding the vendor's key as it is now, as an operator seeds it. */
const seededSecret = (name: string) => world.seededSecret(name, { apiKey: sim.apiKey, orgUuid: sim.orgUuid });
const attempt = (secretId: string) => world.attempt(secretId);

const apiKeyAt = (secretId: string, stage: string) =>
  (JSON.parse(world.secretsManager.store.valueAt(secretId, stage) ?? '{}') as { apiKey?: string }).apiKey;
const stagesOf = (secretId: string) => Object.values(world.secretsManager.store.stagesOf(secretId)).flat();

describe('the bundled rotation function against hostile rotate answers', () => {
  it.each<[string, RotateAnswerFault]>([
    [
      `a new key refused for 2 s, within the ${WINDOW_SECONDS} s window`,
      { shape: 'default', delaySeconds: 2 },
    ],
    ['a 9 MiB answer with the key near its start', { shape: 'huge' }],
    ['an answer trickled over 3 s', { shape: 'slow', trickleSeconds: 3 }],
    ['the key in use handed back', { shape: 'same-key' }],
    ['30 key-shaped decoys before the key', { shape: 'decoy-first', decoys: 30 }],
  ])('%s: the working key ends in AWSCURRENT, one rotate', async (name, fault) => {
    // Prepare
    const secretId = await seededSecret(name.replace(/[^\w]+/g, '-'));
    sim.addFault({ api: 'keys', fault: { type: 'rotate-answer', ...fault } });
    const rotates = sim.requestCount(ROTATE_ROUTE);
    const events = world.published.length;

    // Act
    const run = await attempt(secretId);

    // Assess
    expect(run.error).toBeUndefined();
    expect(run.steps.map((step) => step.outcome)).toEqual([
      fault.shape === 'same-key' ? 'key-unchanged' : 'rotated',
      'nothing-to-set',
      'pending-key-works',
      'finished',
    ]);
    expect(apiKeyAt(secretId, 'AWSCURRENT')).toBe(sim.apiKey);
    expect(stagesOf(secretId)).not.toContain('AWSPENDING');
    expect(sim.requestCount(ROTATE_ROUTE) - rotates).toBe(1);
    expect(world.published.length - events).toBe(1);
  });

  it(`a key refused for longer than the window: RotationResponseLost, then a retry that finds it finishes without a second rotate`, async () => {
    // Prepare: the key works 7 s after the rotate; the window is 4 s.
    const secretId = await seededSecret('late-key');
    sim.addFault({ api: 'keys', fault: { type: 'rotate-answer', shape: 'default', delaySeconds: 7 } });
    const rotates = sim.requestCount(ROTATE_ROUTE);
    const started = Date.now();

    // Act
    const first = await attempt(secretId);
    const firstTook = Date.now() - started;
    const pendingAfterFirst = world.secretsManager.store.valueAt(secretId, 'AWSPENDING');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 7_500 - Date.now())));
    const retry = await attempt(secretId);

    // Assess
    expect((first.error as Error | undefined)?.name).toBe('RotationResponseLost');
    expect(firstTook).toBeGreaterThanOrEqual(WINDOW_SECONDS * 1000);
    expect(pendingAfterFirst).toBeUndefined();
    expect(retry.token).toBe(first.token);
    expect(retry.error).toBeUndefined();
    expect(retry.steps[0]?.outcome).toBe('resumed-from-answer');
    expect(apiKeyAt(secretId, 'AWSCURRENT')).toBe(sim.apiKey);
    expect(stagesOf(secretId)).not.toContain('AWSPENDING');
    expect(sim.requestCount(ROTATE_ROUTE) - rotates).toBe(1);
  });

  it('an AWSCURRENT move applied but answered with a throttle, retried by the SDK: counted as done, finished in one attempt', async () => {
    // Prepare: shrunk from the generated vendor (the SDK's own retry meets the moved label).
    const secretId = await seededSecret('move-answer-lost');
    let left = 1;
    world.secretsManager.store.hook = ({ operation, input, phase }) => {
      if (
        left > 0 &&
        operation === 'UpdateSecretVersionStage' &&
        input.VersionStage === 'AWSCURRENT' &&
        phase === 'after'
      ) {
        left -= 1;
        throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
      }
    };

    // Act
    const run = await attempt(secretId).finally(() => {
      world.secretsManager.store.hook = undefined;
    });

    // Assess
    expect(left).toBe(0);
    expect(run.error).toBeUndefined();
    expect(apiKeyAt(secretId, 'AWSCURRENT')).toBe(sim.apiKey);
    expect(stagesOf(secretId)).not.toContain('AWSPENDING');
  });
});

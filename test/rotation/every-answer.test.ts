/**
 * Named vendors the rotation once lost the key to, each one step beside a case the other tests
 * name: a decoy refused with 404 (not 401), a key longer than 512 characters, an error status
 * whose body holds the key, two invocations finishing one token, and the failures the generated
 * vendor shrank to. Driven in-process with the
 * Secrets Manager stand-in and a vendor built for each case (test/kit/generated-vendor.ts) on the
 * test's clock; generated-vendor.test.ts draws such vendors by the hundred against the bundled
 * function.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_STAGE } from '#lambdas/rotation/answer';
import { runRotationStep } from '#lambdas/rotation/rotation-step';
import { driveRotation } from '#local/runner/rotation-driver';
import { type GeneratedVendor, startGeneratedVendor, type VendorBehaviour } from '../kit/generated-vendor.ts';
import { failOnce } from './fault-helpers.ts';
import { type RotationWorld, throttling, useRotationWorlds } from './harness.ts';

const setUp = useRotationWorlds();
const now = { ms: Date.parse('2026-11-01T00:00:00Z') };
let vendor: GeneratedVendor;
beforeAll(async () => {
  vendor = await startGeneratedVendor({ now: () => now.ms });
});
afterAll(async () => {
  await vendor.close();
});

const newKeyOf = (chars = 40) =>
  `nk_${randomBytes(chars)
    .toString('base64url')
    .slice(0, chars - 3)}`;

/** A world whose secret holds the vendor's key, and whose rotation calls `behaviour`'s vendor. */
async function worldWith(behaviour: Omit<VendorBehaviour, 'key'>): Promise<RotationWorld> {
  const key = `ok_${randomBytes(18).toString('hex')}`;
  vendor.configure({ ...behaviour, key });
  return setUp({
    keysApiUrl: vendor.url,
    now,
    keyPropagationMs: 60_000,
    initialValue: () => JSON.stringify({ apiKey: key, orgUuid: vendor.orgUuid }),
  });
}

const apiKeyAt = (w: RotationWorld, stage: string) =>
  (JSON.parse(w.store.valueAt(w.secretId, stage) ?? '{}') as { apiKey?: string }).apiKey;
const keptAt = (w: RotationWorld) =>
  JSON.parse(w.store.valueAt(w.secretId, ANSWER_STAGE) ?? '{}').rotateAnswer as
    | { status?: number; body: string }
    | undefined;
const errorName = (error: unknown) => (error as Error | undefined)?.name;

describe('a wrong candidate is refused with any 4xx: the search goes on to the key', () => {
  it.each([404, 400, 422, 403])(
    'the key id under "key" refused with %i, the new key under "secret": it ends in AWSCURRENT, one rotate',
    async (status) => {
      // Prepare: the simulator's own id-under-key shape.
      const newKey = newKeyOf();
      const w = await worldWith({
        newKey,
        rotate: {
          rotates: true,
          status: 200,
          contentType: 'application/json',
          body: JSON.stringify({ key: `key_${randomBytes(8).toString('hex')}`, secret: newKey }),
        },
        wrongKey: { kind: 'status', status },
      });

      // Act
      const run = await w.rotate();

      // Assess
      expect(run.error).toBeUndefined();
      expect(apiKeyAt(w, 'AWSCURRENT')).toBe(newKey);
      expect(vendor.rotateCalls).toBe(1);
    },
  );

  it('a vendor that throttles every wrong key (429 with Retry-After): the key past 30 decoys is still found', async () => {
    // Prepare
    const newKey = newKeyOf();
    const decoys = Array.from({ length: 30 }, () => ({ api_key: newKeyOf() }));
    const w = await worldWith({
      newKey,
      rotate: {
        rotates: true,
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ revoked: decoys, data: { credential: newKey } }),
      },
      wrongKey: { kind: 'status', status: 429, retryAfterSeconds: 2 },
    });

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(newKey);
    expect(vendor.rotateCalls).toBe(1);
  });
});

describe('a key of any length a secret can store is a candidate', () => {
  it.each([700, 4_096])('a %i-character signed token under api_key ends in AWSCURRENT', async (chars) => {
    // Prepare
    const newKey = newKeyOf(chars);
    const w = await worldWith({
      newKey,
      rotate: {
        rotates: true,
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ api_key: newKey }),
      },
      wrongKey: { kind: 'status', status: 401 },
    });

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(newKey);
  });
});

describe('the rotate answer is kept and searched whatever its status', () => {
  it('a vendor that rotates, then answers 500 with the key in the error body: the key ends in AWSCURRENT', async () => {
    // Prepare
    const newKey = newKeyOf();
    const w = await worldWith({
      newKey,
      rotate: {
        rotates: true,
        status: 500,
        contentType: 'application/json',
        body: JSON.stringify({ error: 'audit log write failed', api_key: newKey }),
      },
      wrongKey: { kind: 'status', status: 401 },
    });
    let kept: ReturnType<typeof keptAt>;
    w.onSecretsCall(({ operation, phase }) => {
      if (operation === 'PutSecretValue' && phase === 'after') kept ??= keptAt(w);
    });

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(newKey);
    expect(kept).toMatchObject({ status: 500, body: expect.stringContaining(newKey) });
    expect(vendor.rotateCalls).toBe(1);
  });

  it('a vendor that rotates, then answers 502 without the key: the whole answer is kept and the lockout named', async () => {
    // Prepare
    const body = '<html><body><h1>502 Bad Gateway</h1></body></html>';
    const w = await worldWith({
      newKey: newKeyOf(),
      rotate: { rotates: true, status: 502, contentType: 'text/html', body },
      wrongKey: { kind: 'status', status: 401 },
    });

    // Act
    const run = await w.rotate();

    // Assess
    expect(errorName(run.error)).toBe('RotationResponseLost');
    expect((run.error as Error).message).toMatch(/HTTP 502/);
    expect(keptAt(w)).toMatchObject({ status: 502, body, contentType: 'text/html' });
    expect(vendor.rotateCalls).toBe(1);
  });

  it('a 429 that did not rotate: the claim is released, the answer kept, and the next attempt rotates once more', async () => {
    // Prepare
    const newKey = newKeyOf();
    const throttled = {
      rotates: false,
      status: 429,
      contentType: 'application/json',
      body: '{"error":"rate_limited","message":"slow down"}',
    };
    const w = await worldWith({ newKey, rotate: throttled, wrongKey: { kind: 'status', status: 401 } });

    // Act
    const first = await w.rotate();
    const keptFirst = keptAt(w);
    vendor.configure({
      key: vendor.heldKey,
      newKey,
      rotate: { ...throttled, rotates: true, status: 200, body: JSON.stringify({ api_key: newKey }) },
      wrongKey: { kind: 'status', status: 401 },
    });
    const second = await w.rotate();

    // Assess
    expect(errorName(first.error)).toBe('VendorThrottledError');
    expect(keptFirst).toMatchObject({ status: 429, body: throttled.body });
    expect(second.token).toBe(first.token);
    expect(second.error).toBeUndefined();
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(newKey);
    expect(vendor.rotateCalls).toBe(1);
  });
});

describe('shrunk from the generated vendor', () => {
  it('the key in a JSON string six objects and an array deep ends in AWSCURRENT', async () => {
    // Prepare
    const newKey = newKeyOf(8);
    let inner: unknown = JSON.stringify({ '0': newKey });
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) inner = { [name]: inner };
    const w = await worldWith({
      newKey,
      rotate: {
        rotates: true,
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ items: [{ result: inner }], audit: 'x' }),
      },
      wrongKey: { kind: 'status', status: 429 },
    });

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(newKey);
  });

  it('an AWSCURRENT move applied but answered with a throttle: retried, counted as done, finished once', async () => {
    // Prepare
    const newKey = newKeyOf();
    const w = await worldWith({
      newKey,
      rotate: {
        rotates: true,
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ api_key: newKey }),
      },
      wrongKey: { kind: 'reset' },
    });
    failOnce(
      w,
      'UpdateSecretVersionStage',
      'after',
      (input) => input.VersionStage === 'AWSCURRENT',
      throttling,
    );

    // Act
    const run = await w.rotate();

    // Assess
    expect(run.error).toBeUndefined();
    expect(run.steps.map((step) => step.outcome)).toContain('finished');
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(newKey);
    expect(w.events).toHaveLength(1);
  });
});

describe('two invocations finishing one token', () => {
  it('the one that loses the race for the labels says another rotation holds the token', async () => {
    // Prepare: the rotation up to finishSecret, then Secrets Manager's retry overlapping it.
    const newKey = newKeyOf();
    const w = await worldWith({
      newKey,
      rotate: {
        rotates: true,
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ api_key: newKey }),
      },
      wrongKey: { kind: 'status', status: 401 },
    });
    const upToTest = await driveRotation(w.client, w.secretId, async (request) => {
      if (request.Step === 'finishSecret') throw new Error('not yet');
      return runRotationStep(request, w.deps);
    });
    const finish = () =>
      runRotationStep(
        { Step: 'finishSecret', SecretId: w.secretId, ClientRequestToken: upToTest.token },
        w.deps,
      );

    // Act
    const results = await Promise.allSettled([finish(), finish()]);

    // Assess
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.name).toBe('RotationInProgressError');
    expect(failures[0]?.message).toMatch(/another rotation of the same token/);
    expect(apiKeyAt(w, 'AWSCURRENT')).toBe(newKey);
  });
});

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, VendorAuthError, VendorNetworkError } from '#lambdas/platform/errors';
import { KeysClient } from '#lambdas/vendor-api/keys/keys-client';
import {
  CANDIDATE_LIMITS,
  RotateAnswerScanner,
  rotateAnswerCandidates,
} from '#lambdas/vendor-api/keys/rotate-answer';
import { keysClient, sim, useFaultSimulator } from '../transport/fault-fixture.ts';
import { fixedCredentials, rejectionOf, secretStoreCredentials, testSettings } from '../transport/helpers.ts';

const ROTATE = 'POST /orgs/{org_uuid}/api/key/rotate';

useFaultSimulator();

/** Whether `key` still opens the keys API (a fresh client that cannot refresh to another key). */
async function keyWorks(key: string): Promise<boolean> {
  const { client } = keysClient({ credentials: fixedCredentials(key) });
  try {
    await client.getKeyInfo();
    return true;
  } catch (error) {
    if (error instanceof VendorAuthError) return false;
    throw error;
  }
}

describe('KeysClient', () => {
  it('reads the key metadata', async () => {
    // Prepare
    const { client } = keysClient();

    // Act
    const info = await client.getKeyInfo();

    // Assess
    expect(info.raw).toMatchObject({ org_uuid: sim.orgUuid, key_id: expect.any(String) });
  });

  it('rotates the key, returning the raw body uninterpreted, and the old key dies', async () => {
    // Prepare
    const oldKey = sim.apiKey;
    const { client } = keysClient();

    // Act
    const rotated = await client.rotateKey({ timeoutMs: 10_000 });

    // Assess
    expect(sim.apiKey).not.toBe(oldKey);
    expect(rotated).toMatchObject({
      rawBody: expect.stringContaining(sim.apiKey),
      contentType: expect.any(String),
      truncated: false,
      bodyBytes: Buffer.byteLength(rotated.rawBody),
    });
    expect(rotated.words?.map((w) => w.text)).toContain(sim.apiKey);
    expect(rotated.contentType).toMatch(/application\/json/);
    expect(await keyWorks(oldKey)).toBe(false);
    expect(await keyWorks(sim.apiKey)).toBe(true);
  });

  it('keyAccepted answers for exactly its key, with one request each', async () => {
    // Prepare
    const before = sim.requestCount('GET /orgs/{org_uuid}/api/key');
    const good = keysClient({ credentials: fixedCredentials(sim.apiKey) }).client;
    const bad = keysClient({ credentials: fixedCredentials('sk_sim_not_a_key_at_all_0000') }).client;

    // Act
    const results = [await good.keyAccepted(), await bad.keyAccepted()];

    // Assess
    expect(results).toEqual([true, false]);
    expect(sim.requestCount('GET /orgs/{org_uuid}/api/key') - before).toBe(2);
  });

  it('does not retry a rotate whose answer was lost after the key changed; the old key is dead', async () => {
    // Prepare
    const oldKey = sim.apiKey;
    const { client, settings } = keysClient();
    sim.addFault({ api: 'keys', method: 'POST', path: '/orgs/', fault: { type: 'lose-response' } });
    const before = sim.requestCount(ROTATE);

    // Act
    const error = await rejectionOf(client.rotateKey({ timeoutMs: 10_000 }));

    // Assess
    expect(error).toBeInstanceOf(VendorNetworkError);
    expect(error).toMatchObject({ operation: 'keys.rotateKey', requestNotSent: false });
    expect(sim.requestCount(ROTATE) - before).toBe(1);
    expect(settings.sleep.delays).toEqual([]);
    expect(sim.apiKey).not.toBe(oldKey);
    expect(await keyWorks(oldKey)).toBe(false);
    expect(settings.logger.lines).toContainEqual(
      expect.objectContaining({ level: 'warn', message: expect.stringMatching(/outcome unknown/) }),
    );
  });

  it('does not retry a rotate after a 429, not even with a short Retry-After, and hands back that answer', async () => {
    // Prepare
    const { client, settings } = keysClient();
    sim.addFault({
      api: 'keys',
      method: 'POST',
      path: '/orgs/',
      fault: { type: 'status', status: 429, retryAfter: 1 },
    });
    const before = sim.requestCount(ROTATE);

    // Act
    const answer = await client.rotateKey({ timeoutMs: 10_000 });

    // Assess
    expect(answer).toMatchObject({ status: 429, retryAfterMs: 1_000 });
    expect(answer.rawBody).toContain('too_many_requests');
    expect(sim.requestCount(ROTATE) - before).toBe(1);
    expect(settings.sleep.delays).toEqual([]);
  });

  it('does not retry a rotate after a 500, and hands back that answer whole', async () => {
    // Prepare
    const { client } = keysClient();
    sim.addFault({ api: 'keys', method: 'POST', path: '/orgs/', fault: { type: 'status', status: 500 } });
    const before = sim.requestCount(ROTATE);

    // Act
    const answer = await client.rotateKey({ timeoutMs: 10_000 });

    // Assess
    expect(answer).toMatchObject({ status: 500, contentType: expect.stringMatching(/json/) });
    expect(JSON.parse(answer.rawBody)).toMatchObject({ error: 'internal_error' });
    expect(sim.requestCount(ROTATE) - before).toBe(1);
  });

  it('does not refresh the credential and rotate again after a 401', async () => {
    // Prepare: someone else rotated; our cached key is stale and a refresh would find the new one.
    const credentials = secretStoreCredentials(sim);
    const { client } = keysClient({ credentials });
    const otherRotation = sim.replaceKey();
    const before = sim.requestCount(ROTATE);

    // Act
    const answer = await client.rotateKey({ timeoutMs: 10_000 });

    // Assess: no second rotate could kill the key the other rotation just issued.
    expect(answer.status).toBe(401);
    expect(credentials.calls.filter((c) => c.forceRefresh)).toHaveLength(0);
    expect(sim.requestCount(ROTATE) - before).toBe(1);
    expect(sim.apiKey).toBe(otherRotation);
  });

  it('refuses an org uuid that is not a UUID at construction', () => {
    // Act
    const act = () => new KeysClient({ ...testSettings(sim), orgUuid: '../../scan' });

    // Assess
    expect(act).toThrow(ConfigurationError);
  });
});

const KEY = 'sk_live_0123456789abcdef';
const ID = 'key_00112233';

describe('rotateAnswerCandidates', () => {
  it.each([
    ['the key under a common name', JSON.stringify({ key_id: ID, api_key: KEY })],
    ['an id under key, the key under secret', JSON.stringify({ key: ID, secret: KEY })],
    ['nested data.credentials.value', JSON.stringify({ data: { id: ID, credentials: { value: KEY } } })],
    ['an array', JSON.stringify({ keys: [{ key: ID }, [1, KEY]] })],
    ['an odd field name', JSON.stringify({ key_id: ID, 'x-material': KEY })],
    [
      'a JSON document inside a string',
      JSON.stringify({ payload: JSON.stringify({ issued: { bearer: KEY } }) }),
    ],
    ['plain text', `Key ${ID} rotated.\nNew key: ${KEY}\n`],
  ])('finds the key among the candidates in %s', (_shape, body) => {
    // Act
    const candidates = rotateAnswerCandidates(body);

    // Assess
    expect(candidates).toContain(KEY);
  });

  it('orders the configured path first, then common names, then the rest as they appear', () => {
    // Act
    const candidates = rotateAnswerCandidates(
      JSON.stringify({ note_text: 'aaaaaaaaaa', key: ID, data: { here: KEY } }),
      { fieldPath: 'data.here' },
    );

    // Assess
    expect(candidates).toEqual([KEY, ID, 'aaaaaaaaaa']);
  });

  it('never offers excluded strings, short ones, ones with spaces or control characters, or long ones', () => {
    // Act
    const candidates = rotateAnswerCandidates(
      JSON.stringify({
        old: 'sk_old_key_000000',
        short: 'abc',
        spaced: 'two words here',
        control: 'line\nbreak_key_0000',
        long: 'x'.repeat(CANDIDATE_LIMITS.maxChars + 1),
        good: KEY,
      }),
      { exclude: ['sk_old_key_000000'] },
    );

    // Assess
    expect(candidates).toEqual([KEY]);
  });

  it('is bounded: at most maxCandidates, however many strings; a key deeper than any walk is still found', () => {
    // Prepare: nested past the depth a vendor answer is parsed to (JSON_LIMITS.maxDepth, 64).
    let deep: unknown = KEY;
    for (let i = 0; i < 100; i++) deep = { next: deep };
    const many = Array.from({ length: 1_500 }, (_, i) => `candidate_${String(i).padStart(4, '0')}`);

    // Act
    const fromMany = rotateAnswerCandidates(JSON.stringify({ many }));
    const fromDeep = rotateAnswerCandidates(JSON.stringify(deep));

    // Assess
    expect(fromMany).toHaveLength(CANDIDATE_LIMITS.maxCandidates);
    expect(fromDeep).toEqual([KEY]);
  });
});

describe('RotateAnswerScanner', () => {
  it('finds a key split across chunks, keeps the head, and hashes and counts the whole body', () => {
    // Prepare: the key's halves in two chunks, past a head of 16 bytes.
    const padding = 'x'.repeat(CANDIDATE_LIMITS.maxChars + 1);
    const body = Buffer.from(`{"note":"rotated","padding":"${padding}","api_key":"${KEY}"}`);
    const cut = body.indexOf(KEY) + 5;
    const scanner = new RotateAnswerScanner(16);

    // Act
    scanner.push(body.subarray(0, cut));
    scanner.push(body.subarray(cut));
    const scanned = scanner.finish();

    // Assess: the 600-character padding is no key; the key's end offset is past the head.
    expect(scanned).toMatchObject({
      head: body.subarray(0, 16).toString(),
      truncated: true,
      bodyBytes: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    });
    // The field names are shorter than a key (8), the padding longer than a secret could store.
    expect(scanned.words.map((w) => w.text)).toEqual([KEY]);
    expect(scanned.words.at(-1)).toEqual({ text: KEY, endByte: body.indexOf(KEY) + KEY.length });
  });

  it('keeps at most maxCandidates words and counts the rest', () => {
    // Prepare
    const words = Array.from(
      { length: CANDIDATE_LIMITS.maxCandidates + 5 },
      (_, i) => `word_${String(i).padStart(6, '0')}`,
    );
    const scanner = new RotateAnswerScanner(1024);

    // Act
    scanner.push(Buffer.from(words.join(' ')));
    const scanned = scanner.finish();

    // Assess
    expect(scanned.words).toHaveLength(CANDIDATE_LIMITS.maxCandidates);
    expect(scanned.wordsSeen).toBe(CANDIDATE_LIMITS.maxCandidates + 5);
  });
});

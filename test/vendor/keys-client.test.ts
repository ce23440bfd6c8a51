import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError, VendorAuthError, VendorNetworkError, VendorThrottledError } from '#core/errors';
import { findNewKey, KeysClient } from '#core/vendor/keys-client';
import type { VendorHttpSettings } from '#core/vendor/types';
import type { VendorSimulator } from '#local/simulator/types';
import {
  fixedCredentials,
  rejectionOf,
  secretStoreCredentials,
  startSimulator,
  testSettings,
} from './helpers.ts';

const ROTATE = 'POST /orgs/{org_uuid}/api/key/rotate';

let sim: VendorSimulator;
const clients: KeysClient[] = [];

beforeAll(async () => {
  sim = await startSimulator();
});

afterEach(async () => {
  sim.clearFaults();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await sim.close();
});

function keysClient(overrides: Partial<VendorHttpSettings> & { newKeyFieldPath?: string } = {}) {
  const settings = testSettings(sim, overrides);
  const client = new KeysClient({
    ...settings,
    orgUuid: sim.orgUuid,
    newKeyFieldPath: overrides.newKeyFieldPath,
  });
  clients.push(client);
  return { client, settings };
}

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

  it('rotates the key, returning the raw body and the new key, and the old key dies', async () => {
    // Prepare
    const oldKey = sim.apiKey;
    const { client } = keysClient();

    // Act
    const rotated = await client.rotateKey();

    // Assess
    expect(rotated.newKey).toBe(sim.apiKey);
    expect(rotated.newKey).not.toBe(oldKey);
    expect(JSON.parse(rotated.rawBody)).toEqual(rotated.json);
    expect(rotated.contentType).toMatch(/application\/json/);
    expect(await keyWorks(oldKey)).toBe(false);
    expect(await keyWorks(sim.apiKey)).toBe(true);
  });

  it('finds the new key at a configured field path', async () => {
    // Prepare
    const { client } = keysClient({ newKeyFieldPath: 'api_key' });

    // Act
    const rotated = await client.rotateKey();

    // Assess
    expect(rotated.newKey).toBe(sim.apiKey);
  });

  it('returns the raw body and no key when the configured path finds nothing', async () => {
    // Prepare
    const { client } = keysClient({ newKeyFieldPath: 'data.secret' });

    // Act
    const rotated = await client.rotateKey();

    // Assess: the caller persists rawBody and decides; the key is in there.
    expect(rotated.newKey).toBeUndefined();
    expect(rotated.rawBody).toContain(sim.apiKey);
  });

  it('does not retry a rotate whose answer was lost after the key changed; the old key is dead', async () => {
    // Prepare
    const oldKey = sim.apiKey;
    const { client, settings } = keysClient();
    sim.addFault({ api: 'keys', method: 'POST', path: '/orgs/', fault: { type: 'lose-response' } });
    const before = sim.requestCount(ROTATE);

    // Act
    const error = await rejectionOf(client.rotateKey());

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

  it('does not retry a rotate after a 429, not even with a short Retry-After', async () => {
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
    const error = await rejectionOf(client.rotateKey());

    // Assess
    expect(error).toBeInstanceOf(VendorThrottledError);
    expect(error).toMatchObject({ retryAfterMs: 1_000 });
    expect(sim.requestCount(ROTATE) - before).toBe(1);
    expect(settings.sleep.delays).toEqual([]);
  });

  it('does not retry a rotate after a 500', async () => {
    // Prepare
    const { client } = keysClient();
    sim.addFault({ api: 'keys', method: 'POST', path: '/orgs/', fault: { type: 'status', status: 500 } });
    const before = sim.requestCount(ROTATE);

    // Act
    const error = await rejectionOf(client.rotateKey());

    // Assess
    expect(error).toMatchObject({ name: 'VendorUnavailableError' });
    expect(sim.requestCount(ROTATE) - before).toBe(1);
  });

  it('does not refresh the credential and rotate again after a 401', async () => {
    // Prepare: someone else rotated; our cached key is stale and a refresh would find the new one.
    const credentials = secretStoreCredentials(sim);
    const { client } = keysClient({ credentials });
    const otherRotation = sim.replaceKey();
    const before = sim.requestCount(ROTATE);

    // Act
    const error = await rejectionOf(client.rotateKey());

    // Assess: no second rotate could kill the key the other rotation just issued.
    expect(error).toBeInstanceOf(VendorAuthError);
    expect(error.message).toMatch(/not retried with a refreshed credential/);
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

describe('findNewKey', () => {
  it.each([
    ['api_key', { org_uuid: 'o', key_id: 'key_1', api_key: 'k1' }, 'k1'],
    ['apiKey', { apiKey: 'k2' }, 'k2'],
    ['key', { key: 'k3' }, 'k3'],
    ['token', { token: 'k4' }, 'k4'],
    ['access_token', { access_token: 'k5' }, 'k5'],
    ['secret', { secret: 'k6' }, 'k6'],
    ['new_key', { new_key: 'k7' }, 'k7'],
    ['data.api_key', { data: { api_key: 'k8' } }, 'k8'],
  ])('finds the key under %s by default', (_where, json, expected) => {
    // Act
    const key = findNewKey(json);

    // Assess
    expect(key).toBe(expected);
  });

  it.each([
    ['a key id alone', { key_id: 'key_1' }],
    ['an empty string', { api_key: '' }],
    ['a number', { api_key: 42 }],
    ['no object', 'just text'],
    ['nothing', undefined],
  ])('finds no key in %s', (_what, json) => {
    // Act
    const key = findNewKey(json);

    // Assess
    expect(key).toBeUndefined();
  });

  it('follows a dot path with array indexes', () => {
    // Act
    const key = findNewKey({ result: { keys: [{ value: 'old' }, { value: 'new' }] } }, 'result.keys.1.value');

    // Assess
    expect(key).toBe('new');
  });
});

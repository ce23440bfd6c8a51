import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import { probe } from '../kit/http.ts';
import { apiKeyHeader, bearer } from '../kit/simulator.ts';

const ORG = '6f1c2e4a-8b3d-4c5e-9f7a-1b2c3d4e5f60';
const INITIAL_KEY = 'sk_sim_0123456789abcdef0123456789abcdef';

let sim: VendorSimulator;

beforeEach(async () => {
  sim = await startVendorSimulator({ orgUuid: ORG, apiKey: INITIAL_KEY });
});

afterEach(async () => {
  await sim.close();
});

function rotate(key: string, org = ORG) {
  return fetch(`${sim.url}/orgs/${org}/api/key/rotate`, { method: 'POST', headers: bearer(key) });
}

/** Status codes of one authenticated call to each of the three APIs. */
async function statusesWith(key: string): Promise<number[]> {
  const scan = await fetch(`${sim.url}/scans`, { headers: bearer(key) });
  const keys = await fetch(`${sim.url}/orgs/${ORG}/api/key`, { headers: bearer(key) });
  const breach = await fetch(`${sim.url}/view_breaches`, { headers: apiKeyHeader(key) });
  return [scan.status, keys.status, breach.status];
}

describe('key metadata', () => {
  it('returns metadata without the key itself', async () => {
    // Act
    const res = await fetch(`${sim.url}/orgs/${ORG}/api/key`, { headers: bearer(INITIAL_KEY) });

    // Assess
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      org_uuid: ORG,
      key_id: expect.stringMatching(/^key_[0-9a-f]{16}$/),
      created_at: expect.any(String),
      last_used_at: expect.any(String),
      rotated_at: null,
    });
    expect(text).not.toContain(INITIAL_KEY);
  });

  it('answers 404 for another organisation', async () => {
    // Act
    const res = await fetch(`${sim.url}/orgs/0d6f2a4e-1111-4222-8333-444455556666/api/key`, {
      headers: bearer(INITIAL_KEY),
    });

    // Assess
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not_found' });
  });

  it('answers 401 before revealing whether an organisation exists', async () => {
    expect((await fetch(`${sim.url}/orgs/${ORG}/api/key`)).status).toBe(401);
    expect(
      (await fetch(`${sim.url}/orgs/other/api/key`, { headers: apiKeyHeader(INITIAL_KEY) })).status,
    ).toBe(401);
  });
});

describe('rotation', () => {
  it('kills the old key on all three APIs the moment rotate succeeds', async () => {
    // Prepare
    expect(await statusesWith(INITIAL_KEY)).toEqual([200, 200, 200]);

    // Act
    const res = await rotate(INITIAL_KEY);

    // Assess
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      api_key: string;
      key_id: string;
      org_uuid: string;
      created_at: string;
    };
    expect(body).toEqual({
      org_uuid: ORG,
      key_id: expect.stringMatching(/^key_/),
      api_key: expect.stringMatching(/^sk_sim_[0-9a-f]{32}$/),
      created_at: expect.any(String),
    });
    expect(sim.apiKey).toBe(body.api_key);
    expect(await statusesWith(INITIAL_KEY)).toEqual([401, 401, 401]);
    expect(await statusesWith(body.api_key)).toEqual([200, 200, 200]);
  });

  it('records the rotation in the metadata under a new key id', async () => {
    // Prepare
    const before = (await (
      await fetch(`${sim.url}/orgs/${ORG}/api/key`, { headers: bearer(INITIAL_KEY) })
    ).json()) as {
      key_id: string;
    };

    // Act
    const { api_key: newKey } = (await (await rotate(INITIAL_KEY)).json()) as { api_key: string };
    const after = (await (
      await fetch(`${sim.url}/orgs/${ORG}/api/key`, { headers: bearer(newKey) })
    ).json()) as {
      key_id: string;
      rotated_at: string | null;
    };

    // Assess
    expect(after.key_id).not.toBe(before.key_id);
    expect(after.rotated_at).toEqual(expect.any(String));
  });

  it('rotates although the response is lost, so only the new key works afterwards', async () => {
    // Prepare
    sim.addFault({ api: 'keys', method: 'POST', path: /\/rotate$/, fault: { type: 'lose-response' } });

    // Act
    const lost = await probe(`${sim.url}/orgs/${ORG}/api/key/rotate`, bearer(INITIAL_KEY), 'POST');

    // Assess
    expect(lost.status).toBeUndefined();
    expect(lost.error).toBeDefined();
    expect(sim.apiKey).not.toBe(INITIAL_KEY);
    expect(await statusesWith(INITIAL_KEY)).toEqual([401, 401, 401]);
    expect(await statusesWith(sim.apiKey)).toEqual([200, 200, 200]);
    expect(sim.requestCount('POST /orgs/{org_uuid}/api/key/rotate')).toBe(1);
  });

  it('does not rotate when a status fault answers first', async () => {
    // Prepare
    sim.addFault({
      api: 'keys',
      path: `/orgs/${ORG}/api/key/rotate`,
      fault: { type: 'status', status: 503 },
    });

    // Act
    const res = await rotate(INITIAL_KEY);

    // Assess
    expect(res.status).toBe(503);
    expect(sim.apiKey).toBe(INITIAL_KEY);
  });

  it('refuses to rotate with a wrong key or for another organisation', async () => {
    expect((await rotate('sk_sim_wrong')).status).toBe(401);
    expect((await rotate(INITIAL_KEY, '0d6f2a4e-1111-4222-8333-444455556666')).status).toBe(404);
    expect(sim.apiKey).toBe(INITIAL_KEY);
  });
});

describe('replaceKey', () => {
  it('revokes the current key everywhere and returns a fresh valid one', async () => {
    // Act
    const fresh = sim.replaceKey();

    // Assess
    expect(fresh).toMatch(/^sk_sim_[0-9a-f]{32}$/);
    expect(sim.apiKey).toBe(fresh);
    expect(await statusesWith(INITIAL_KEY)).toEqual([401, 401, 401]);
    expect(await statusesWith(fresh)).toEqual([200, 200, 200]);
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import { bearer, pollStatus, startScan } from './helpers.ts';

let sim: VendorSimulator;

beforeAll(async () => {
  sim = await startVendorSimulator();
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => {
  sim.clearFaults();
});

function control(method: string, path: string, body?: unknown) {
  return fetch(`${sim.url}/__simulator/${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
}

describe('the HTTP control plane', () => {
  it('adds a fault rule from JSON, with a regex path', async () => {
    // Act
    const added = await control('POST', 'faults', {
      api: 'scan',
      method: 'get',
      path: { regex: '^/sta(ts|tus)' },
      times: 2,
      fault: { type: 'status', status: 429, retryAfter: 3 },
    });
    const statuses = [];
    for (let i = 0; i < 3; i += 1)
      statuses.push((await fetch(`${sim.url}/stats`, { headers: bearer(sim.apiKey) })).status);

    // Assess
    expect(added.status).toBe(201);
    expect(statuses).toEqual([429, 429, 200]);
  });

  it('clears every fault with DELETE', async () => {
    // Prepare
    await control('POST', 'faults', { path: '/stats', times: 5, fault: { type: 'status', status: 500 } });

    // Act
    const cleared = await control('DELETE', 'faults');
    const res = await fetch(`${sim.url}/stats`, { headers: bearer(sim.apiKey) });

    // Assess
    expect(cleared.status).toBe(200);
    expect(res.status).toBe(200);
  });

  it.each([
    ['an unknown fault type', { fault: { type: 'explode' } }],
    ['no fault', { path: '/stats' }],
    ['a bad regex', { path: { regex: '(' }, fault: { type: 'hang' } }],
  ])('rejects a fault rule with %s with 400', async (_, body) => {
    // Act
    const res = await control('POST', 'faults', body);

    // Assess
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'bad_request' });
  });

  it('scripts scans by exact domain or regex', async () => {
    // Act
    const exact = await control('POST', 'scripts', {
      domain: 'cp-fail.example.com',
      behaviour: { outcome: 'fail', pollsToFinish: 1 },
    });
    const pattern = await control('POST', 'scripts', {
      domain: { regex: '^cp-stuck\\.' },
      behaviour: { outcome: 'never-finish' },
    });
    const failing = await startScan(sim, 'cp-fail.example.com');
    const stuck = await startScan(sim, 'cp-stuck.example.com');

    // Assess
    expect(exact.status).toBe(201);
    expect(pattern.status).toBe(201);
    expect((await pollStatus(sim, failing)).status).toBe('failed');
    for (let i = 0; i < 5; i += 1) await pollStatus(sim, stuck);
    expect((await pollStatus(sim, stuck)).status).toBe('running');
  });

  it('rejects a script with an unknown outcome with 400', async () => {
    expect(
      (await control('POST', 'scripts', { domain: 'x.example.com', behaviour: { outcome: 'explode' } }))
        .status,
    ).toBe(400);
  });

  it('replaces the key and returns the new one', async () => {
    // Prepare
    const old = sim.apiKey;

    // Act
    const res = await control('POST', 'replace-key');

    // Assess
    const { apiKey } = (await res.json()) as { apiKey: string };
    expect(apiKey).toBe(sim.apiKey);
    expect(apiKey).not.toBe(old);
    expect((await fetch(`${sim.url}/stats`, { headers: bearer(old) })).status).toBe(401);
  });

  it('answers 404 for unknown controls and does not count them as API requests', async () => {
    // Act
    const res = await control('GET', 'nothing');

    // Assess
    expect(res.status).toBe(404);
    expect(sim.requestCount('GET /__simulator/nothing')).toBe(0);
  });
});

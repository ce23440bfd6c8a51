import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import { bearer, pollStatus, startScan } from '../kit/simulator.ts';

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
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** node:http, because fetch does not let a test choose the Host header. */
function rawControl(
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  const url = new URL(`${sim.url}/__simulator/${path}`);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the control plane against cross-site requests', () => {
  const fault = JSON.stringify({ path: '/stats', times: 1, fault: { type: 'status', status: 500 } });

  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
  ])('refuses a state change sent as %s with 415 and applies nothing', async (_, type) => {
    // Act
    const res = await rawControl('faults', { 'content-type': type }, fault);
    const stats = await fetch(`${sim.url}/stats`, { headers: bearer(sim.apiKey) });

    // Assess
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body)).toMatchObject({ error: 'unsupported_media_type' });
    expect(stats.status).toBe(200);
  });

  it('refuses a body-less key replacement without a JSON content type with 415', async () => {
    // Prepare
    const old = sim.apiKey;

    // Act
    const res = await rawControl('replace-key', {}, '');

    // Assess
    expect(res.status).toBe(415);
    expect(sim.apiKey).toBe(old);
  });

  it.each([
    ['a foreign name (DNS rebinding)', 'attacker.example.com'],
    ['loopback with another port', '127.0.0.1:1'],
    ['no port', 'localhost'],
  ])('refuses a Host header with %s with 403', async (_, host) => {
    // Act
    const res = await rawControl('faults', { host, 'content-type': 'application/json' }, fault);
    const stats = await fetch(`${sim.url}/stats`, { headers: bearer(sim.apiKey) });

    // Assess
    expect(res.status).toBe(403);
    expect(stats.status).toBe(200);
  });

  it.each(['127.0.0.1', 'localhost', 'LocalHost'])(
    'accepts JSON with the Host header %s and the server port',
    async (name) => {
      // Prepare
      const port = new URL(sim.url).port;

      // Act
      const res = await rawControl(
        'faults',
        { host: `${name}:${port}`, 'content-type': 'application/json; charset=utf-8' },
        fault,
      );
      sim.clearFaults();

      // Assess
      expect(res.status).toBe(201);
    },
  );
});

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

describe('GET /__simulator/faults', () => {
  it('lists the active rules in match order with their remaining uses, and forgets spent ones', async () => {
    // Prepare
    await control('POST', 'faults', {
      api: 'scan',
      path: '/stats',
      times: 2,
      fault: { type: 'status', status: 503 },
    });
    await control('POST', 'faults', {
      path: { regex: '^.report.', flags: 'i' },
      fault: { type: 'unframed', afterBytes: 10 },
    });

    // Act
    const before = await (await control('GET', 'faults')).json();
    await fetch(`${sim.url}/stats`, { headers: bearer(sim.apiKey) });
    const after = (await (await control('GET', 'faults')).json()) as { faults: { remaining: number }[] };

    // Assess
    expect(before).toEqual({
      // Spent uses of the earlier tests' rules on this simulator.
      spent: expect.any(Array),
      faults: [
        { api: 'scan', path: '/stats', remaining: 2, fault: { type: 'status', status: 503 } },
        {
          path: { regex: '^.report.', flags: 'i' },
          remaining: 1,
          fault: { type: 'unframed', afterBytes: 10 },
        },
      ],
    });
    expect(after.faults[0]?.remaining).toBe(1);
    await control('DELETE', 'faults');
    // Spent uses stay listed, each naming the operation it hit.
    const spentBefore = (before as { spent: unknown[] }).spent.length;
    const cleared = (await (await control('GET', 'faults')).json()) as {
      faults: unknown[];
      spent: unknown[];
    };
    expect(cleared.faults).toEqual([]);
    expect(cleared.spent.slice(spentBefore)).toEqual([
      {
        operation: 'GET /stats',
        api: 'scan',
        fault: { type: 'status', status: 503 },
        at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      },
    ]);
  });
});

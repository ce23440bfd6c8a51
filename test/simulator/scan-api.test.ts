/** The simulator's scanning API apart from outputs: starting, auth, status progression, listing, deleting, counting. */

import { describe, expect, it } from 'vitest';
import { startVendorSimulator } from '#local/simulator/index';
import { bearer, finishedScan, pollStatus, startScan } from '../kit/simulator.ts';
import { get, sim, useScanSimulator } from './scan-fixture.ts';

useScanSimulator();

describe('starting a scan', () => {
  it('answers a form POST with a v4 uuid, the domain and status queued', async () => {
    // Act
    const res = await fetch(`${sim.url}/scan`, {
      method: 'POST',
      headers: { ...bearer(sim.apiKey), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'domain=example.com',
    });

    // Assess
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ uuid: expect.any(String), domain: 'example.com', status: 'queued' });
    expect(body.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('also starts a scan with GET /scan?domain=', async () => {
    // Act
    const res = await get('/scan?domain=get.example.com');

    // Assess
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ domain: 'get.example.com', status: 'queued' });
    expect(sim.requestCount('GET /scan')).toBe(1);
  });

  it.each([
    ['an empty domain', 'domain='],
    ['no domain field', 'other=x'],
    ['a domain that is not a host name', 'domain=not%20a%20domain%21'],
  ])('rejects %s with 400 and a JSON error', async (_, body) => {
    // Act
    const res = await fetch(`${sim.url}/scan`, {
      method: 'POST',
      headers: { ...bearer(sim.apiKey), 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });

    // Assess
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'bad_request', message: expect.stringContaining('domain') });
  });

  it('rejects GET /scan without a domain with 400', async () => {
    expect((await get('/scan')).status).toBe(400);
  });

  it('rejects a JSON body with 415', async () => {
    // Act
    const res = await fetch(`${sim.url}/scan`, {
      method: 'POST',
      headers: { ...bearer(sim.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'example.com' }),
    });

    // Assess
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ error: 'unsupported_media_type' });
  });
});

describe('authentication on the scanning API', () => {
  it.each([
    ['no credential', {}],
    ['a wrong bearer key', { authorization: 'Bearer sk_sim_00000000000000000000000000000000' }],
    ['the key as X-API-Key instead of Bearer', 'x-api-key'],
    ['the key without the Bearer scheme', 'bare'],
  ])('answers 401 JSON to %s and never echoes the key', async (_, variant) => {
    // Prepare
    const headers: Record<string, string> =
      variant === 'x-api-key'
        ? { 'x-api-key': sim.apiKey }
        : variant === 'bare'
          ? { authorization: sim.apiKey }
          : (variant as Record<string, string>);

    // Act
    const res = await get('/scans', headers);

    // Assess
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: 'unauthorized', message: expect.any(String) });
    expect(text).not.toContain(sim.apiKey);
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('status progression', () => {
  it('goes queued, running with rising progress, then completed on poll 3 by default', async () => {
    // Prepare
    const uuid = await startScan(sim, 'progress.example.com');

    // Act
    const polls = [];
    for (let i = 0; i < 4; i += 1) polls.push(await pollStatus(sim, uuid));

    // Assess
    expect(polls.map((p) => p.status)).toEqual(['queued', 'running', 'completed', 'completed']);
    expect(polls.map((p) => p.progress)).toEqual([0, 50, 100, 100]);
    expect(polls[0]).toEqual({
      uuid,
      domain: 'progress.example.com',
      status: 'queued',
      progress: 0,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updated_at: expect.any(String),
    });
  });

  it('finishes on the first poll when pollsToFinish is 0 (instant scans)', async () => {
    // Prepare
    const instant = await startVendorSimulator({ pollsToFinish: 0 });
    try {
      const uuid = await startScan(instant, 'instant.example.com');

      // Act
      const status = await pollStatus(instant, uuid);

      // Assess
      expect(status).toMatchObject({ status: 'completed', progress: 100 });
    } finally {
      await instant.close();
    }
  });

  it('fails scans of failingDomains with an error message (exact name and RegExp)', async () => {
    // Prepare
    const exact = await startScan(sim, 'BROKEN.example.com');
    const pattern = await startScan(sim, 'fail-2.example.com');

    // Act
    const exactPolls = [
      await pollStatus(sim, exact),
      await pollStatus(sim, exact),
      await pollStatus(sim, exact),
    ];
    const patternPolls = [
      await pollStatus(sim, pattern),
      await pollStatus(sim, pattern),
      await pollStatus(sim, pattern),
    ];

    // Assess
    expect(exactPolls.map((p) => p.status)).toEqual(['queued', 'running', 'failed']);
    expect(exactPolls[2]?.error).toEqual(expect.stringContaining('broken.example.com'));
    expect(patternPolls[2]?.status).toBe('failed');
  });

  it('follows scriptScan: never-finish stays running, a scripted success ignores failingDomains', async () => {
    // Prepare
    sim.scriptScan('stuck.example.com', { outcome: 'never-finish' });
    sim.scriptScan(/^fail-ok\./, { outcome: 'succeed', pollsToFinish: 1 });
    const stuck = await startScan(sim, 'stuck.example.com');
    const ok = await startScan(sim, 'fail-ok.example.com');

    // Act
    const stuckPolls = [];
    for (let i = 0; i < 30; i += 1) stuckPolls.push(await pollStatus(sim, stuck));
    const okStatus = await pollStatus(sim, ok);

    // Assess
    expect(stuckPolls[0]?.status).toBe('queued');
    expect(new Set(stuckPolls.slice(1).map((p) => p.status))).toEqual(new Set(['running']));
    const progress = stuckPolls.map((p) => p.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(Math.max(...progress)).toBeLessThan(100);
    expect(okStatus.status).toBe('completed');
  });

  it('scripts a failure that takes a given number of polls', async () => {
    // Prepare
    sim.scriptScan('late-fail.example.com', { outcome: 'fail', pollsToFinish: 5 });
    const uuid = await startScan(sim, 'late-fail.example.com');

    // Act
    const statuses = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await pollStatus(sim, uuid)).status);

    // Assess
    expect(statuses).toEqual(['queued', 'running', 'running', 'running', 'failed']);
  });

  it('answers 404 for an unknown uuid and 400 for a malformed one', async () => {
    expect((await get('/status/4b7c1f0e-3a51-4f7e-9f0a-2d1f3c4b5a69')).status).toBe(404);
    const malformed = await get('/status/not-a-uuid');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: 'bad_request' });
  });
});

describe('listing, deleting and stats', () => {
  it('keeps list, stats and delete consistent, and reading them does not advance scans', async () => {
    // Prepare
    const own = await startVendorSimulator({ failingDomains: ['f.example.com'] });
    try {
      const queued = await startScan(own, 'q.example.com');
      const running = await startScan(own, 'r.example.com');
      await pollStatus(own, running);
      await pollStatus(own, running);
      const done = await finishedScan(own, 'c.example.com');
      await finishedScan(own, 'f.example.com');
      const gone = await finishedScan(own, 'd.example.com');

      // Act
      const deleted = await fetch(`${own.url}/scan/${gone}`, {
        method: 'DELETE',
        headers: bearer(own.apiKey),
      });
      const list = (await (await fetch(`${own.url}/scans`, { headers: bearer(own.apiKey) })).json()) as {
        scans: { uuid: string; domain: string; status: string; created_at: string }[];
      };
      const stats = await (await fetch(`${own.url}/stats`, { headers: bearer(own.apiKey) })).json();
      const listAgain = await (await fetch(`${own.url}/scans`, { headers: bearer(own.apiKey) })).json();

      // Assess
      expect(deleted.status).toBe(200);
      expect(await deleted.json()).toEqual({ uuid: gone, deleted: true });
      expect(list.scans.map((s) => [s.domain, s.status])).toEqual([
        ['q.example.com', 'queued'],
        ['r.example.com', 'running'],
        ['c.example.com', 'completed'],
        ['f.example.com', 'failed'],
      ]);
      expect(list.scans[0]).toEqual({
        uuid: queued,
        domain: 'q.example.com',
        status: 'queued',
        created_at: expect.any(String),
      });
      expect(list.scans.some((s) => s.uuid === done)).toBe(true);
      expect(stats).toEqual({ total: 4, by_status: { queued: 1, running: 1, completed: 1, failed: 1 } });
      expect(listAgain).toEqual(list);
    } finally {
      await own.close();
    }
  });

  it('answers 404 for everything about a deleted scan, and for deleting it again', async () => {
    // Prepare
    const uuid = await finishedScan(sim, 'delete-me.example.com');
    await fetch(`${sim.url}/scan/${uuid}`, { method: 'DELETE', headers: bearer(sim.apiKey) });

    // Act
    const answers = await Promise.all(
      ['status', 'report', 'logs', 'debug'].map(async (kind) => (await get(`/${kind}/${uuid}`)).status),
    );
    const again = await fetch(`${sim.url}/scan/${uuid}`, { method: 'DELETE', headers: bearer(sim.apiKey) });

    // Assess
    expect(answers).toEqual([404, 404, 404, 404]);
    expect(again.status).toBe(404);
  });

  it('answers 404 for unknown paths and 405 for a wrong method on a known one', async () => {
    // Act
    const unknown = await get('/nope');
    const wrongMethod = await fetch(`${sim.url}/stats`, { method: 'POST', headers: bearer(sim.apiKey) });

    // Assess
    expect(unknown.status).toBe(404);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
  });
});

describe('request counting', () => {
  it('counts requests per route template, whatever their answer', async () => {
    // Prepare
    const own = await startVendorSimulator();
    try {
      const uuid = await startScan(own, 'count.example.com');

      // Act
      await pollStatus(own, uuid);
      await pollStatus(own, uuid);
      await fetch(`${own.url}/status/${uuid}`);

      // Assess
      expect(own.requestCount('POST /scan')).toBe(1);
      expect(own.requestCount('GET /status/{uuid}')).toBe(3);
      expect(own.requestCount('GET /report/{uuid}')).toBe(0);
    } finally {
      await own.close();
    }
  });
});

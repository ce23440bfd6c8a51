/** The simulator's scan outputs (report, logs, debug): bytes, caching headers, gzip, and their timestamps. */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import { rawRequest } from '../kit/http.ts';
import { bearer, finishedScan, pollStatus, startScan } from '../kit/simulator.ts';
import { get, sim, useScanSimulator } from './scan-fixture.ts';

useScanSimulator();

describe('scan outputs', () => {
  it('serves the report as JSON that names the domain and has findings, about reportBytes long', async () => {
    // Prepare
    const uuid = await finishedScan(sim, 'report.example.com');

    // Act
    const res = await get(`/report/${uuid}`);

    // Assess
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const text = await res.text();
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(text.length).toBeGreaterThan(250 * 1024);
    expect(text.length).toBeLessThan(258 * 1024);
    const report = JSON.parse(text) as { domain: string; findings: unknown[]; summary: { total: number } };
    expect(report.domain).toBe('report.example.com');
    expect(report.findings.length).toBeGreaterThan(0);
    expect(report.summary.total).toBe(report.findings.length);
  });

  it('serves logs as text and debug output as NDJSON', async () => {
    // Prepare
    const uuid = await finishedScan(sim, 'outputs.example.com');

    // Act
    const logs = await rawRequest(`${sim.url}/logs/${uuid}`, { headers: bearer(sim.apiKey) });
    const debug = await rawRequest(`${sim.url}/debug/${uuid}`, { headers: bearer(sim.apiKey) });

    // Assess
    expect(logs.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(logs.headers['content-encoding']).toBeUndefined();
    expect(logs.body.toString()).toMatch(/outputs\.example\.com/);
    expect(logs.body.toString().trimEnd().split('\n').at(-1)).toMatch(/completed$/);
    expect(debug.headers['content-type']).toBe('application/x-ndjson');
    const lines = debug.body.toString().trimEnd().split('\n');
    expect(lines.every((line) => typeof JSON.parse(line) === 'object')).toBe(true);
    expect(debug.body.length).toBeGreaterThanOrEqual(64 * 1024);
    expect(debug.body.length).toBeLessThan(66 * 1024);
  });

  it('sends the same bytes, Content-Length and quoted ETag on every request', async () => {
    // Prepare
    const uuid = await finishedScan(sim, 'stable.example.com');
    const other = await finishedScan(sim, 'stable.example.com');

    for (const kind of ['report', 'logs', 'debug']) {
      // Act
      const first = await rawRequest(`${sim.url}/${kind}/${uuid}`, { headers: bearer(sim.apiKey) });
      const second = await rawRequest(`${sim.url}/${kind}/${uuid}`, { headers: bearer(sim.apiKey) });
      const otherScan = await rawRequest(`${sim.url}/${kind}/${other}`, { headers: bearer(sim.apiKey) });

      // Assess
      expect(second.body.equals(first.body)).toBe(true);
      expect(first.headers['content-length']).toBe(String(first.body.length));
      expect(first.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
      expect(second.headers.etag).toBe(first.headers.etag);
      expect(otherScan.headers.etag).not.toBe(first.headers.etag);
    }
  });

  it('answers 304 to If-None-Match with the current ETag', async () => {
    // Prepare
    const uuid = await finishedScan(sim, 'etag.example.com');
    const first = await get(`/report/${uuid}`);
    const etag = first.headers.get('etag') ?? '';
    await first.arrayBuffer();

    // Act
    const res = await get(`/report/${uuid}`, { ...bearer(sim.apiKey), 'if-none-match': etag });

    // Assess
    expect(res.status).toBe(304);
  });

  it('gzips logs for clients that accept gzip, without a Content-Length', async () => {
    // Prepare
    const uuid = await finishedScan(sim, 'gzip.example.com');
    const plain = await rawRequest(`${sim.url}/logs/${uuid}`, { headers: bearer(sim.apiKey) });

    // Act
    const gz = await rawRequest(`${sim.url}/logs/${uuid}`, {
      headers: { ...bearer(sim.apiKey), 'accept-encoding': 'gzip' },
    });
    const viaFetch = await get(`/logs/${uuid}`);

    // Assess
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['content-length']).toBeUndefined();
    expect(gz.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
    expect(viaFetch.headers.get('content-encoding')).toBe('gzip');
    expect(await viaFetch.text()).toBe(plain.body.toString());
  });

  it('does not gzip the report or debug output', async () => {
    // Prepare
    const uuid = await finishedScan(sim, 'nogzip.example.com');

    // Act
    const report = await rawRequest(`${sim.url}/report/${uuid}`, {
      headers: { ...bearer(sim.apiKey), 'accept-encoding': 'gzip' },
    });

    // Assess
    expect(report.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(report.body.toString())).toHaveProperty('findings');
  });

  it('streams a 50 MiB report with an exact Content-Length', async () => {
    // Prepare
    const big = await startVendorSimulator({ pollsToFinish: 0, reportBytes: 50 * 1024 * 1024 });
    try {
      const uuid = await finishedScan(big, 'big.example.com');

      // Act
      const res = await fetch(`${big.url}/report/${uuid}`, { headers: bearer(big.apiKey) });
      let received = 0;
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) received += chunk.length;

      // Assess
      expect(Number(res.headers.get('content-length'))).toBe(received);
      expect(received).toBeGreaterThan(50 * 1024 * 1024 - 1024);
      expect(received).toBeLessThan(50 * 1024 * 1024 + 1024);
    } finally {
      await big.close();
    }
  });

  it('answers 409 for outputs of a scan that has not completed', async () => {
    // Prepare
    const uuid = await startScan(sim, 'early.example.com');
    await pollStatus(sim, uuid);

    for (const kind of ['report', 'logs', 'debug']) {
      // Act
      const res = await get(`/${kind}/${uuid}`);

      // Assess
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({
        error: 'conflict',
        message: expect.stringContaining('queued'),
      });
    }
  });

  it('answers 409 for the report of a failed scan but serves its logs and debug output', async () => {
    // Prepare
    const uuid = await finishedScan(sim, 'fail-outputs.example.com');

    // Act
    const report = await get(`/report/${uuid}`);
    const logs = await get(`/logs/${uuid}`);
    const debug = await get(`/debug/${uuid}`);

    // Assess
    expect(report.status).toBe(409);
    expect(logs.status).toBe(200);
    expect(await logs.text()).toMatch(/ERROR scan .* failed: /);
    expect(debug.status).toBe(200);
  });

  it('answers 404 for outputs of an unknown scan and 400 for a malformed uuid', async () => {
    expect((await get('/report/4b7c1f0e-3a51-4f7e-9f0a-2d1f3c4b5a69')).status).toBe(404);
    expect((await get('/logs/nope')).status).toBe(400);
  });
});

describe('scan outputs against a controlled clock', () => {
  let clocked: VendorSimulator;
  let clock = new Date('2026-11-02T10:00:00.000Z');

  beforeAll(async () => {
    clocked = await startVendorSimulator({ now: () => clock, reportBytes: 8 * 1024, debugBytes: 8 * 1024 });
  });

  afterAll(async () => {
    await clocked.close();
  });

  it('stamps finished_at with the poll that finished the scan, not the time of the download', async () => {
    // Prepare
    const uuid = await startScan(clocked, 'clock.example.com');
    clock = new Date('2026-11-02T10:05:00.000Z');
    for (let i = 0; i < 3; i += 1) await pollStatus(clocked, uuid);
    clock = new Date('2026-11-02T11:00:00.000Z');

    // Act
    const res = await fetch(`${clocked.url}/report/${uuid}`, { headers: bearer(clocked.apiKey) });

    // Assess
    const report = (await res.json()) as { started_at: string; finished_at: string };
    expect(report.started_at).toBe('2026-11-02T10:00:00.000Z');
    expect(report.finished_at).toBe('2026-11-02T10:05:00.000Z');
  });

  it('writes the scanned domain, not a placeholder, into every host of the report and debug output', async () => {
    // Prepare
    const uuid = await finishedScan(clocked, 'hosts.example.com');

    // Act
    const report = await rawRequest(`${clocked.url}/report/${uuid}`, { headers: bearer(clocked.apiKey) });
    const debug = await rawRequest(`${clocked.url}/debug/${uuid}`, { headers: bearer(clocked.apiKey) });

    // Assess
    const findings = (JSON.parse(report.body.toString()) as { findings: { host: string }[] }).findings;
    expect(findings.length).toBeGreaterThan(0);
    for (const finding of findings) expect(finding.host).toMatch(/^[a-z0-9-]+\.hosts\.example\.com$/);
    const events = debug.body
      .toString()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { target: string });
    for (const event of events)
      expect(event.target).toMatch(/^https:\/\/[a-z0-9-]+\.hosts\.example\.com:\d+\/$/);
    expect(report.body.toString()).not.toContain('\\u0000');
    expect(debug.body.toString()).not.toContain('\\u0000');
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import { probe, rawRequest } from '../kit/http.ts';
import { apiKeyHeader, bearer, finishedScan } from '../kit/simulator.ts';

let sim: VendorSimulator;
let uuid: string;

beforeAll(async () => {
  sim = await startVendorSimulator({ pollsToFinish: 0, reportBytes: 32 * 1024 });
  uuid = await finishedScan(sim, 'faults.example.com');
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => {
  sim.clearFaults();
});

function stats(headers: Record<string, string> = bearer(sim.apiKey)) {
  return fetch(`${sim.url}/stats`, { headers });
}

async function totalScans(): Promise<number> {
  return ((await (await stats()).json()) as { total: number }).total;
}

function postScan(domain: string) {
  return fetch(`${sim.url}/scan`, {
    method: 'POST',
    headers: { ...bearer(sim.apiKey), 'content-type': 'application/x-www-form-urlencoded' },
    body: `domain=${domain}`,
  });
}

describe('status faults', () => {
  it('answers 429 with Retry-After in seconds, before checking the key', async () => {
    // Prepare
    sim.addFault({ api: 'scan', path: '/stats', fault: { type: 'status', status: 429, retryAfter: 7 } });

    // Act
    const res = await stats({});

    // Assess
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(await res.json()).toMatchObject({ error: 'too_many_requests' });
  });

  it('sends Retry-After as an HTTP date when given one', async () => {
    // Prepare
    const date = 'Wed, 21 Oct 2026 07:28:00 GMT';
    sim.addFault({ path: '/stats', fault: { type: 'status', status: 429, retryAfter: date } });

    // Act
    const res = await stats();

    // Assess
    expect(res.headers.get('retry-after')).toBe(date);
  });

  it.each([500, 502, 503, 504])('answers %i with a JSON error body', async (status) => {
    // Prepare
    sim.addFault({ path: '/stats', fault: { type: 'status', status } });

    // Act
    const res = await stats();

    // Assess
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ error: expect.any(String), message: expect.any(String) });
  });

  it('sends a given body, typed as text when it is not JSON', async () => {
    // Prepare
    sim.addFault({
      path: '/stats',
      fault: { type: 'status', status: 502, body: '<html>Bad gateway</html>' },
    });

    // Act
    const res = await stats();

    // Assess
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toBe('<html>Bad gateway</html>');
  });

  it('answers before the handler runs, so a faulted start creates no scan', async () => {
    // Prepare
    const before = await totalScans();
    sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'status', status: 503 } });

    // Act
    const res = await postScan('never.example.com');

    // Assess
    expect(res.status).toBe(503);
    expect(await totalScans()).toBe(before);
    expect(sim.requestCount('POST /scan')).toBeGreaterThanOrEqual(1);
  });
});

describe('timing faults', () => {
  it('delays the answer by the given latency and then answers normally', async () => {
    // Prepare
    sim.addFault({ path: '/stats', fault: { type: 'latency', ms: 150 } });
    const started = performance.now();

    // Act
    const res = await stats();

    // Assess
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    expect(res.status).toBe(200);
  });

  it('never answers a hanging request, and the next request is served', async () => {
    // Prepare
    sim.addFault({ path: '/stats', fault: { type: 'hang' } });

    // Act
    const hung = fetch(`${sim.url}/stats`, { headers: bearer(sim.apiKey), signal: AbortSignal.timeout(200) });

    // Assess
    await expect(hung).rejects.toThrow(/aborted|timeout/i);
    expect((await stats()).status).toBe(200);
  });
});

describe('connection faults', () => {
  it('cuts the body after afterBytes with reset-mid-body, having declared the full length', async () => {
    // Prepare
    const whole = await rawRequest(`${sim.url}/report/${uuid}`, { headers: bearer(sim.apiKey) });
    sim.addFault({ path: '/report/', fault: { type: 'reset-mid-body', afterBytes: 1000 } });

    // Act
    const cut = await probe(`${sim.url}/report/${uuid}`, bearer(sim.apiKey));

    // Assess
    expect(cut.status).toBe(200);
    expect(cut.headers['content-length']).toBe(String(whole.body.length));
    expect(cut.headers.etag).toBe(whole.headers.etag);
    expect(cut.received).toBe(1000);
    expect(cut.complete).toBe(false);
    expect(cut.error).toBeDefined();
  });

  it('ends the connection after afterBytes with truncate, short of the declared Content-Length', async () => {
    // Prepare
    sim.addFault({ path: '/debug/', fault: { type: 'truncate', afterBytes: 5000 } });

    // Act
    const cut = await probe(`${sim.url}/debug/${uuid}`, bearer(sim.apiKey));

    // Assess
    expect(cut.status).toBe(200);
    expect(Number(cut.headers['content-length'])).toBeGreaterThan(5000);
    expect(cut.received).toBe(5000);
    expect(cut.complete).toBe(false);
  });

  it('truncates a gzip-encoded log stream so that it cannot be completed', async () => {
    // Prepare
    sim.addFault({ path: '/logs/', fault: { type: 'truncate', afterBytes: 100 } });

    // Act
    const cut = await probe(`${sim.url}/logs/${uuid}`, { ...bearer(sim.apiKey), 'accept-encoding': 'gzip' });

    // Assess
    expect(cut.headers['content-encoding']).toBe('gzip');
    expect(cut.received).toBe(100);
    expect(cut.complete).toBe(false);
  });

  it('makes a fetch body read fail on a cut JSON answer', async () => {
    // Prepare
    sim.addFault({ path: '/stats', fault: { type: 'reset-mid-body', afterBytes: 10 } });

    // Act
    const res = await stats();

    // Assess
    expect(res.status).toBe(200);
    await expect(res.json()).rejects.toThrow();
  });

  it('answers 200 JSON that does not parse with malformed-json, after processing the request', async () => {
    // Prepare
    const before = await totalScans();
    sim.addFault({ method: 'POST', path: '/scan', fault: { type: 'malformed-json' } });

    // Act
    const res = await postScan('malformed.example.com');

    // Assess
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const text = await res.text();
    expect(() => JSON.parse(text)).toThrow();
    expect(await totalScans()).toBe(before + 1);
  });

  it('drops the connection before processing with refuse', async () => {
    // Prepare
    const before = await totalScans();
    const countBefore = sim.requestCount('POST /scan');
    sim.addFault({ method: 'POST', path: '/scan', fault: { type: 'refuse' } });

    // Act
    const attempt = postScan('refused.example.com');

    // Assess
    await expect(attempt).rejects.toThrow(TypeError);
    expect(await totalScans()).toBe(before);
    expect(sim.requestCount('POST /scan')).toBe(countBefore + 1);
  });

  it('processes the request but never answers with lose-response', async () => {
    // Prepare
    const before = await totalScans();
    sim.addFault({ method: 'POST', path: '/scan', fault: { type: 'lose-response' } });

    // Act
    const attempt = postScan('lost.example.com');

    // Assess
    await expect(attempt).rejects.toThrow(TypeError);
    expect(await totalScans()).toBe(before + 1);
  });
});

describe('rule matching', () => {
  it('applies a rule `times` times, then lets requests through, whatever flags its RegExp path has', async () => {
    // Prepare: a global RegExp keeps a position between matches; every request must still match.
    sim.addFault({ path: '/stats', times: 2, fault: { type: 'status', status: 503 } });
    sim.addFault({ path: /^\/stats/g, times: 3, fault: { type: 'status', status: 500 } });

    // Act
    const statuses: number[] = [];
    for (let request = 0; request < 6; request++) statuses.push((await stats()).status);

    // Assess
    expect(statuses).toEqual([503, 503, 500, 500, 500, 200]);
  });

  it('uses a rule once by default', async () => {
    // Prepare
    sim.addFault({ path: '/stats', fault: { type: 'status', status: 500 } });

    // Act
    const statuses = [(await stats()).status, (await stats()).status];

    // Assess
    expect(statuses).toEqual([500, 200]);
  });

  it('applies matching rules in insertion order', async () => {
    // Prepare
    sim.addFault({ path: '/stats', fault: { type: 'status', status: 502 } });
    sim.addFault({ path: '/stats', fault: { type: 'status', status: 504 } });

    // Act
    const statuses = [(await stats()).status, (await stats()).status, (await stats()).status];

    // Assess
    expect(statuses).toEqual([502, 504, 200]);
  });

  it('filters on api, method and path (prefix or RegExp)', async () => {
    // Prepare
    sim.addFault({ api: 'breach', path: '/', times: 10, fault: { type: 'status', status: 500 } });
    sim.addFault({ method: 'DELETE', times: 10, fault: { type: 'status', status: 501 } });
    sim.addFault({ path: /^\/status\/[0-9a-f-]+$/, times: 10, fault: { type: 'status', status: 502 } });

    // Act
    const scanStats = await stats();
    const breachList = await fetch(`${sim.url}/view_breaches`, { headers: apiKeyHeader(sim.apiKey) });
    const status = await fetch(`${sim.url}/status/${uuid}`, { headers: bearer(sim.apiKey) });

    // Assess
    expect(scanStats.status).toBe(200);
    expect(breachList.status).toBe(500);
    expect(status.status).toBe(502);
  });

  it('stops applying a rule once its remover is called, and clearFaults removes all', async () => {
    // Prepare
    const remove = sim.addFault({ path: '/stats', times: 5, fault: { type: 'status', status: 503 } });
    sim.addFault({ path: '/scans', times: 5, fault: { type: 'status', status: 503 } });

    // Act
    remove();
    const afterRemove = (await stats()).status;
    sim.clearFaults();
    const afterClear = (await fetch(`${sim.url}/scans`, { headers: bearer(sim.apiKey) })).status;

    // Assess
    expect(afterRemove).toBe(200);
    expect(afterClear).toBe(200);
  });

  it('applies storage faults on the storage origin only', async () => {
    // Prepare
    sim.createReport('faulty download');
    sim.addFault({ api: 'storage', fault: { type: 'status', status: 503, retryAfter: 1 } });
    const hop = await rawRequest(`${sim.url}/files/faulty%20download.zip`, {
      headers: apiKeyHeader(sim.apiKey),
    });

    // Act
    const first = await rawRequest(String(hop.headers.location));
    const second = await rawRequest(String(hop.headers.location));

    // Assess
    expect(hop.status).toBe(307);
    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('1');
    expect(second.status).toBe(200);
  });

  it.each([
    ['an unknown fault type', { fault: { type: 'explode' } }],
    ['times of zero', { times: 0, fault: { type: 'hang' } }],
    ['a status outside 200-599', { fault: { type: 'status', status: 99 } }],
    ['a negative afterBytes', { fault: { type: 'truncate', afterBytes: -1 } }],
    ['an unknown api', { api: 'billing', fault: { type: 'hang' } }],
    ['an unknown redirect-internal target', { fault: { type: 'redirect-internal', to: 'intranet' } }],
    ['a deep-json depth of zero', { fault: { type: 'deep-json', depth: 0 } }],
    ['a trickle interval of zero', { fault: { type: 'trickle', intervalMs: 0 } }],
    ['a key-echo into an unknown place', { fault: { type: 'key-echo', into: 'headers' } }],
  ])('rejects a rule with %s', (_, rule) => {
    expect(() => sim.addFault(rule as never)).toThrow(TypeError);
  });
});

describe('hostile-vendor faults', () => {
  it('redirect-internal answers 302 to the metadata service, or to the target named', async () => {
    sim.addFault({ api: 'scan', path: '/report/', times: 2, fault: { type: 'redirect-internal' } });
    sim.addFault({ api: 'scan', path: '/report/', fault: { type: 'redirect-internal', to: 'loopback' } });

    const metadata = await rawRequest(`${sim.url}/report/${uuid}`, { headers: bearer(sim.apiKey) });
    await rawRequest(`${sim.url}/report/${uuid}`, { headers: bearer(sim.apiKey) });
    const loopback = await rawRequest(`${sim.url}/report/${uuid}`, { headers: bearer(sim.apiKey) });

    expect(metadata.status).toBe(302);
    expect(metadata.headers.location).toBe('http://169.254.169.254/latest/meta-data/');
    expect(loopback.headers.location).toBe('https://127.0.0.1:1/latest/meta-data/');
  });

  it('deep-json answers valid JSON nested as deep as asked', async () => {
    sim.addFault({ api: 'scan', path: '/report/', fault: { type: 'deep-json', depth: 100 } });

    const res = await rawRequest(`${sim.url}/report/${uuid}`, { headers: bearer(sim.apiKey) });

    const text = res.body.toString('utf8');
    expect(text.match(/\{"a":/g)).toHaveLength(100);
    expect(() => JSON.parse(text)).not.toThrow();
  });

  it('trickle sends the real answer one byte at a time, intervalMs apart', async () => {
    sim.addFault({ api: 'scan', path: '/status/', fault: { type: 'trickle', intervalMs: 20 } });
    const started = Date.now();

    const res = await rawRequest(`${sim.url}/status/${uuid}`, { headers: bearer(sim.apiKey) });

    const body = res.body.toString('utf8');
    expect(JSON.parse(body)).toMatchObject({ uuid });
    expect(Date.now() - started).toBeGreaterThanOrEqual((body.length - 1) * 20 - 50);
  });
});

describe('key-echo faults', () => {
  it('adds the Authorization header and the bare key to a JSON status answer', async () => {
    sim.addFault({ api: 'scan', method: 'GET', path: '/status/', fault: { type: 'key-echo' } });

    const answer = await fetch(`${sim.url}/status/${uuid}`, { headers: bearer(sim.apiKey) });

    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      uuid,
      authorization: `Bearer ${sim.apiKey}`,
      note: `served for ${sim.apiKey}`,
    });
  });

  it('adds x-api-key to a recon answer', async () => {
    sim.addFault({ api: 'breach', method: 'POST', path: '/recon', fault: { type: 'key-echo' } });

    const answer = await fetch(`${sim.url}/recon`, {
      method: 'POST',
      headers: { ...apiKeyHeader(sim.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Kim Lee', emails: ['kim@example.com'] }),
    });

    expect(await answer.json()).toMatchObject({ status: 'success', 'x-api-key': sim.apiKey });
  });

  it('names the report after the key with into report-name, and only a recon can spend it', async () => {
    sim.addFault({ fault: { type: 'key-echo', into: 'report-name' } });
    // Not a recon: the rule is not spent on it.
    expect((await stats()).status).toBe(200);

    const answer = await fetch(`${sim.url}/recon`, {
      method: 'POST',
      headers: { ...apiKeyHeader(sim.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Kim Lee', emails: ['kim@example.com'] }),
    });

    const { output } = (await answer.json()) as { output: string };
    expect(output).toMatch(new RegExp(`^rpt-${sim.apiKey}-[0-9a-f]{6}$`));
    // The report exists under that name: a download with it would be served.
    const download = await fetch(`${sim.url}/download/${encodeURIComponent(output)}`, {
      headers: apiKeyHeader(sim.apiKey),
      redirect: 'manual',
    });
    expect(download.status).toBe(302);
  });
});

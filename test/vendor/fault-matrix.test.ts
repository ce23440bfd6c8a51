/**
 * The fault matrix: every fault the simulator can script, against the client behaviour the design
 * asks for. Sleep is injected (recorded, never slept) and jitter is pinned, so the suite is fast
 * and the backoff arithmetic is exact.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  VendorAuthError,
  VendorHttpError,
  VendorNetworkError,
  VendorResponseError,
  VendorThrottledError,
  VendorTimeoutError,
} from '#lambdas/platform/errors';
import { BreachClient } from '#lambdas/platform/vendor-api/breach-client';
import { ScanClient } from '#lambdas/platform/vendor-api/scan-client';
import type { VendorHttpSettings } from '#lambdas/platform/vendor-api/types';
import type { VendorSimulator } from '#local/simulator/types';
import {
  closedPort,
  fixedCredentials,
  midRotationCredentials,
  readAll,
  recordingSleep,
  rejectionOf,
  relay,
  secretStoreCredentials,
  startSimulator,
  testSettings,
} from './helpers.ts';

let sim: VendorSimulator;
const clients: { close(): Promise<void> }[] = [];

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

function scanClient(overrides: Partial<VendorHttpSettings> = {}) {
  const settings = testSettings(sim, overrides);
  const client = new ScanClient(settings);
  clients.push(client);
  return { client, settings };
}

function breachClient(overrides: Partial<VendorHttpSettings> = {}) {
  const settings = testSettings(sim, overrides);
  const client = new BreachClient(settings);
  clients.push(client);
  return { client, settings };
}

/** A scan that exists and is complete (the simulator finishes scans on the first poll here). */
async function finishedScan(): Promise<string> {
  const { client } = scanClient();
  const { uuid } = await client.startScan('fixture.example.com');
  await client.getStatus(uuid);
  return uuid;
}

const STATUS_ROUTE = 'GET /status/{uuid}';

describe('throttling (429)', () => {
  it('retries a 429 after at least its Retry-After in seconds', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient({ random: () => 0 });
    sim.addFault({ api: 'scan', path: '/status/', fault: { type: 'status', status: 429, retryAfter: 3 } });
    const before = sim.requestCount(STATUS_ROUTE);

    // Act
    const status = await client.getStatus(uuid);

    // Assess
    expect(status.state).toBe('succeeded');
    expect(settings.sleep.delays).toEqual([3000]);
    expect(sim.requestCount(STATUS_ROUTE) - before).toBe(2);
  });

  it('retries a 429 after at least its Retry-After given as an HTTP date', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient({ random: () => 0 });
    const date = new Date(Date.now() + 5_000).toUTCString();
    sim.addFault({ api: 'scan', path: '/status/', fault: { type: 'status', status: 429, retryAfter: date } });

    // Act
    await client.getStatus(uuid);
    const stillToWait = Date.parse(date) - Date.now();

    // Assess
    expect(settings.sleep.delays).toHaveLength(1);
    expect(settings.sleep.delays[0]).toBeGreaterThanOrEqual(stillToWait);
    expect(settings.sleep.delays[0]).toBeGreaterThan(3_000);
  });

  it('waits the longer of the jittered backoff and Retry-After', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient({ random: () => 1, retry: { baseDelayMs: 4_000 } });
    sim.addFault({ api: 'scan', path: '/status/', fault: { type: 'status', status: 429, retryAfter: 1 } });

    // Act
    await client.getStatus(uuid);

    // Assess
    expect(settings.sleep.delays).toEqual([4_000]);
  });

  it('gives up at once with VendorThrottledError when Retry-After exceeds maxDelayMs', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient({ retry: { maxDelayMs: 10_000 } });
    sim.addFault({ api: 'scan', path: '/status/', fault: { type: 'status', status: 429, retryAfter: 120 } });

    // Act
    const error = await rejectionOf(client.getStatus(uuid));

    // Assess: never sooner than the vendor asked, never a sleep longer than maxDelayMs.
    expect(error).toBeInstanceOf(VendorThrottledError);
    expect(error).toMatchObject({ name: 'VendorThrottledError', retryAfterMs: 120_000, retryable: true });
    expect(settings.sleep.delays).toEqual([]);
  });

  it('throws VendorThrottledError with retryAfterMs once the attempts are used up', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient({ retry: { maxAttempts: 3 } });
    sim.addFault({
      api: 'scan',
      path: '/status/',
      times: 3,
      fault: { type: 'status', status: 429, retryAfter: 2 },
    });
    const before = sim.requestCount(STATUS_ROUTE);

    // Act
    const error = await rejectionOf(client.getStatus(uuid));

    // Assess
    expect(error).toBeInstanceOf(VendorThrottledError);
    expect(error).toMatchObject({ retryAfterMs: 2_000, operation: 'scan.getStatus' });
    expect((error as VendorThrottledError).requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sim.requestCount(STATUS_ROUTE) - before).toBe(3);
    expect(settings.sleep.delays).toHaveLength(2);
  });
});

describe('server errors (5xx)', () => {
  it.each([500, 502, 503, 504])('retries a %i with full-jitter backoff, then succeeds', async (status) => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient({ random: () => 0.5 });
    sim.addFault({ api: 'scan', path: '/status/', times: 3, fault: { type: 'status', status } });
    const before = sim.requestCount(STATUS_ROUTE);

    // Act
    const result = await client.getStatus(uuid);

    // Assess: 0.5 * min(20 000, 500 * 2^n) for n = 0, 1, 2.
    expect(result.state).toBe('succeeded');
    expect(settings.sleep.delays).toEqual([250, 500, 1_000]);
    expect(sim.requestCount(STATUS_ROUTE) - before).toBe(4);
  });

  it.each([500, 502, 503, 504])('throws VendorUnavailableError after maxAttempts of %i', async (status) => {
    // Prepare
    const uuid = await finishedScan();
    const { client } = scanClient();
    sim.addFault({ api: 'scan', path: '/status/', times: 10, fault: { type: 'status', status } });
    const before = sim.requestCount(STATUS_ROUTE);

    // Act
    const error = await rejectionOf(client.getStatus(uuid));

    // Assess
    expect(error).toBeInstanceOf(VendorHttpError);
    expect(error).toMatchObject({ name: 'VendorUnavailableError', status, retryable: true });
    expect(sim.requestCount(STATUS_ROUTE) - before).toBe(5);
  });

  it('caps a single backoff sleep at maxDelayMs', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient({
      random: () => 1,
      retry: { baseDelayMs: 1_000, maxDelayMs: 3_000, maxAttempts: 5, maxElapsedMs: 600_000 },
    });
    sim.addFault({ api: 'scan', path: '/status/', times: 4, fault: { type: 'status', status: 503 } });

    // Act
    await client.getStatus(uuid);

    // Assess
    expect(settings.sleep.delays).toEqual([1_000, 2_000, 3_000, 3_000]);
  });

  it('stops retrying before a sleep would overrun maxElapsedMs', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient({
      random: () => 1,
      retry: { baseDelayMs: 1_000, maxElapsedMs: 2_500 },
    });
    sim.addFault({ api: 'scan', path: '/status/', times: 10, fault: { type: 'status', status: 500 } });

    // Act
    const error = await rejectionOf(client.getStatus(uuid));

    // Assess: 1 000 fits, 1 000 + 2 000 would not.
    expect(error).toMatchObject({ name: 'VendorUnavailableError' });
    expect(settings.sleep.delays).toEqual([1_000]);
  });

  it('does not retry a permanent 4xx and keeps a body snippet', async () => {
    // Prepare
    const { client, settings } = scanClient();
    sim.addFault({
      api: 'scan',
      path: '/status/',
      fault: { type: 'status', status: 422, body: '{"error":"unprocessable"}' },
    });
    const before = sim.requestCount(STATUS_ROUTE);

    // Act
    const error = await rejectionOf(client.getStatus('0b56a9df-50fa-44ae-87d7-c51248d4d9d5'));

    // Assess
    expect(error).toMatchObject({ name: 'VendorHttpError', status: 422, retryable: false });
    expect((error as VendorHttpError).bodySnippet).toContain('unprocessable');
    expect(sim.requestCount(STATUS_ROUTE) - before).toBe(1);
    expect(settings.sleep.delays).toEqual([]);
  });

  it('treats a redirect on a JSON call as a permanent error', async () => {
    // Prepare
    const { client } = scanClient();
    sim.addFault({ api: 'scan', path: '/stats', fault: { type: 'status', status: 302 } });

    // Act
    const error = await rejectionOf(client.getStats());

    // Assess
    expect(error).toMatchObject({ name: 'VendorHttpError', status: 302, retryable: false });
  });
});

describe('latency and timeouts', () => {
  it('succeeds when the latency stays below the request timeout', async () => {
    // Prepare
    const { client, settings } = scanClient({ requestTimeoutMs: 1_000 });
    sim.addFault({ api: 'scan', path: '/stats', fault: { type: 'latency', ms: 150 } });

    // Act
    const stats = await client.getStats();

    // Assess
    expect(stats.raw).toMatchObject({ total: expect.any(Number) });
    expect(settings.sleep.delays).toEqual([]);
  });

  it('throws VendorTimeoutError when the vendor hangs, after retrying the idempotent call', async () => {
    // Prepare
    const { client, settings } = scanClient({ requestTimeoutMs: 300, retry: { maxAttempts: 2 } });
    sim.addFault({ api: 'scan', path: '/stats', times: 2, fault: { type: 'hang' } });
    const before = sim.requestCount('GET /stats');
    const started = Date.now();

    // Act
    const error = await rejectionOf(client.getStats());

    // Assess
    expect(error).toBeInstanceOf(VendorTimeoutError);
    expect(error).toMatchObject({ name: 'VendorTimeoutError', phase: 'request', timeoutMs: 300 });
    expect(sim.requestCount('GET /stats') - before).toBe(2);
    expect(settings.sleep.delays).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('times out a download whose first hop hangs', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client } = scanClient({ requestTimeoutMs: 300, retry: { maxAttempts: 1 } });
    sim.addFault({ api: 'scan', path: '/report/', fault: { type: 'hang' } });

    // Act
    const error = await rejectionOf(client.getReport(uuid));

    // Assess
    expect(error).toMatchObject({ name: 'VendorTimeoutError', phase: 'request' });
  });
});

describe('broken connections and bodies', () => {
  it('retries an idempotent call whose answer was reset mid-body', async () => {
    // Prepare
    const { client, settings } = scanClient();
    sim.addFault({ api: 'scan', path: '/scans', fault: { type: 'reset-mid-body', afterBytes: 5 } });

    // Act
    const listed = await client.listScans();

    // Assess
    expect(Array.isArray(listed.scans)).toBe(true);
    expect(settings.sleep.delays).toHaveLength(1);
  });

  it('retries an idempotent call whose answer was truncated', async () => {
    // Prepare
    const { client, settings } = scanClient();
    sim.addFault({ api: 'scan', path: '/stats', fault: { type: 'truncate', afterBytes: 5 } });

    // Act
    const stats = await client.getStats();

    // Assess
    expect(stats.raw).toMatchObject({ total: expect.any(Number) });
    expect(settings.sleep.delays).toHaveLength(1);
  });

  it('errors the download stream with VendorNetworkError when the connection resets mid-body', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client } = scanClient();
    sim.addFault({ api: 'scan', path: '/report/', fault: { type: 'reset-mid-body', afterBytes: 10_000 } });
    const download = await client.getReport(uuid);

    // Act
    const error = await rejectionOf(readAll(download.body));

    // Assess
    expect(error).toBeInstanceOf(VendorNetworkError);
    expect(error).toMatchObject({ operation: 'scan.getReport', requestNotSent: false });
  });

  it('errors the download stream instead of succeeding silently when the body is truncated', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client } = scanClient();
    sim.addFault({ api: 'scan', path: '/report/', fault: { type: 'truncate', afterBytes: 10_000 } });
    const download = await client.getReport(uuid);

    // Act
    const error = await rejectionOf(readAll(download.body));

    // Assess
    expect(error).toBeInstanceOf(VendorNetworkError);
    expect(download.contentLength).toBeGreaterThan(10_000);
  });

  it('errors a gzip download stream when the compressed body is cut short', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client } = scanClient();
    sim.addFault({ api: 'scan', path: '/logs/', fault: { type: 'reset-mid-body', afterBytes: 100 } });
    const download = await client.getLogs(uuid);

    // Act
    const error = await rejectionOf(readAll(download.body));

    // Assess
    expect(error).toBeInstanceOf(VendorNetworkError);
  });

  it('throws VendorResponseError for malformed JSON where a field is needed', async () => {
    // Prepare
    const { client } = scanClient();
    sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'malformed-json' } });

    // Act
    const error = await rejectionOf(client.startScan('malformed.example.com'));

    // Assess
    expect(error).toBeInstanceOf(VendorResponseError);
    expect(error).toMatchObject({ name: 'VendorResponseError', retryable: false });
  });

  it('classifies a malformed status body as unknown and keeps it', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client } = scanClient();
    sim.addFault({ api: 'scan', path: '/status/', fault: { type: 'malformed-json' } });

    // Act
    const status = await client.getStatus(uuid);

    // Assess
    expect(status.state).toBe('unknown');
    expect(status.raw.length).toBeGreaterThan(0);
  });
});

describe('credentials (401/403)', () => {
  it('refreshes the credential once after an expired key and succeeds with the new key', async () => {
    // Prepare
    const credentials = secretStoreCredentials(sim);
    const { client } = scanClient({ credentials });
    await client.getStats();
    sim.replaceKey();

    // Act
    const stats = await client.getStats();

    // Assess
    expect(stats.raw).toMatchObject({ total: expect.any(Number) });
    expect(credentials.calls.filter((c) => c.forceRefresh)).toHaveLength(1);
  });

  it('throws VendorAuthError when the refreshed key is refused too', async () => {
    // Prepare
    const credentials = fixedCredentials('sk_sim_wrong_key_0000');
    const { client, settings } = scanClient({ credentials });
    const before = sim.requestCount('GET /stats');

    // Act
    const error = await rejectionOf(client.getStats());

    // Assess
    expect(error).toBeInstanceOf(VendorAuthError);
    expect(error).toMatchObject({ name: 'VendorAuthError', status: 401, retryable: false });
    // The key, the refreshed key, then the pending key (none): two requests, no backoff.
    expect(credentials.calls).toBe(3);
    expect(sim.requestCount('GET /stats') - before).toBe(2);
    expect(settings.sleep.delays).toEqual([]);
  });

  it('tries the pending key of a rotation in progress when the re-read current key is refused too', async () => {
    // Prepare: the vendor rotated; AWSCURRENT still names the dead key, AWSPENDING the new one.
    const deadKey = sim.apiKey;
    sim.replaceKey();
    const credentials = midRotationCredentials(deadKey, () => sim.apiKey);
    const { client, settings } = scanClient({ credentials });
    const before = sim.requestCount('GET /stats');

    // Act
    const stats = await client.getStats();

    // Assess
    expect(stats.raw).toMatchObject({ total: expect.any(Number) });
    expect(credentials.calls).toEqual([
      { forceRefresh: false, pending: false },
      { forceRefresh: true, pending: false },
      { forceRefresh: false, pending: true },
    ]);
    expect(sim.requestCount('GET /stats') - before).toBe(3);
    expect(settings.sleep.delays).toEqual([]);
  });

  it('fails with VendorAuthError when the pending key is refused too, after exactly three requests', async () => {
    // Prepare: a key rotated in the vendor's console; AWSPENDING holds a stale key of its own.
    const deadKey = sim.apiKey;
    sim.replaceKey();
    const credentials = midRotationCredentials(deadKey, () => 'sk_sim_stale_pending_0000');
    const { client } = scanClient({ credentials });
    const before = sim.requestCount('GET /stats');

    // Act
    const error = await rejectionOf(client.getStats());

    // Assess
    expect(error).toMatchObject({ name: 'VendorAuthError', status: 401 });
    expect(sim.requestCount('GET /stats') - before).toBe(3);
    expect(JSON.stringify(error)).not.toContain('sk_sim_stale_pending_0000');
  });

  it('treats a 403 like a 401: one refresh, then VendorAuthError', async () => {
    // Prepare
    const credentials = secretStoreCredentials(sim);
    const { client } = scanClient({ credentials });
    sim.addFault({ api: 'scan', path: '/stats', times: 2, fault: { type: 'status', status: 403 } });

    // Act
    const error = await rejectionOf(client.getStats());

    // Assess
    expect(error).toMatchObject({ name: 'VendorAuthError', status: 403 });
    expect(credentials.calls).toEqual([
      { forceRefresh: false, pending: false },
      { forceRefresh: true, pending: false },
      { forceRefresh: false, pending: true },
    ]);
  });
});

describe('non-idempotent calls (start scan, recon)', () => {
  it('does not retry a start scan after a 500', async () => {
    // Prepare
    const { client, settings } = scanClient();
    sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'status', status: 500 } });
    const before = sim.requestCount('POST /scan');

    // Act
    const error = await rejectionOf(client.startScan('once.example.com'));

    // Assess
    expect(error).toMatchObject({ name: 'VendorUnavailableError', status: 500 });
    expect(sim.requestCount('POST /scan') - before).toBe(1);
    expect(settings.sleep.delays).toEqual([]);
  });

  it('does not retry a start scan whose answer was lost after the vendor processed it', async () => {
    // Prepare
    const { client } = scanClient();
    sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'lose-response' } });
    const before = sim.requestCount('POST /scan');

    // Act
    const error = await rejectionOf(client.startScan('lost.example.com'));

    // Assess
    expect(error).toBeInstanceOf(VendorNetworkError);
    expect(error).toMatchObject({ requestNotSent: false });
    expect(sim.requestCount('POST /scan') - before).toBe(1);
  });

  it('does not retry a start scan reset mid-body', async () => {
    // Prepare
    const { client } = scanClient();
    sim.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      fault: { type: 'reset-mid-body', afterBytes: 3 },
    });
    const before = sim.requestCount('POST /scan');

    // Act
    const error = await rejectionOf(client.startScan('reset.example.com'));

    // Assess
    expect(error).toBeInstanceOf(VendorNetworkError);
    expect(sim.requestCount('POST /scan') - before).toBe(1);
  });

  it('does not retry a start scan that timed out', async () => {
    // Prepare
    const { client } = scanClient({ requestTimeoutMs: 300 });
    sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'hang' } });
    const before = sim.requestCount('POST /scan');

    // Act
    const error = await rejectionOf(client.startScan('slow.example.com'));

    // Assess
    expect(error).toBeInstanceOf(VendorTimeoutError);
    expect(sim.requestCount('POST /scan') - before).toBe(1);
  });

  it('does not retry a start scan whose connection was closed after connecting (refuse)', async () => {
    // Prepare: the socket was accepted, so the request may have been read: not provably unsent.
    const { client, settings } = scanClient();
    sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'refuse' } });

    // Act
    const error = await rejectionOf(client.startScan('refused.example.com'));

    // Assess
    expect(error).toBeInstanceOf(VendorNetworkError);
    expect(error).toMatchObject({ requestNotSent: false });
    expect(settings.sleep.delays).toEqual([]);
    expect(settings.logger.lines).toHaveLength(1);
  });

  it('retries a start scan after a 429', async () => {
    // Prepare
    const { client, settings } = scanClient();
    sim.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      fault: { type: 'status', status: 429, retryAfter: 1 },
    });
    const before = sim.requestCount('POST /scan');

    // Act
    const started = await client.startScan('throttled.example.com');

    // Assess
    expect(started.uuid).toBeDefined();
    expect(sim.requestCount('POST /scan') - before).toBe(2);
    expect(settings.sleep.delays).toHaveLength(1);
  });

  it('retries a start scan after connection refused and succeeds once the port answers', async () => {
    // Prepare: nobody listens on the port until the first backoff sleep opens a relay to the simulator.
    const port = await closedPort();
    let opened: { close(): Promise<void> } | undefined;
    const sleep = Object.assign(
      async () => {
        opened ??= await relay(port, sim.url);
      },
      { delays: [] as number[] },
    );
    const { client, settings } = scanClient({ baseUrl: `http://127.0.0.1:${port}`, sleep });
    const before = sim.requestCount('POST /scan');

    // Act
    const started = await client.startScan('refused-then-ok.example.com').finally(() => opened?.close());

    // Assess
    expect(started.uuid).toBeDefined();
    expect(sim.requestCount('POST /scan') - before).toBe(1);
    expect(settings.logger.lines.map((l) => l.extra?.errorCode ?? l.extra?.status)).toEqual([
      'ECONNREFUSED',
      200,
    ]);
  });

  it('throws VendorNetworkError(requestNotSent) when the port stays refused', async () => {
    // Prepare
    const port = await closedPort();
    const { client, settings } = scanClient({
      baseUrl: `http://127.0.0.1:${port}`,
      retry: { maxAttempts: 3 },
    });

    // Act
    const error = await rejectionOf(client.startScan('nobody.example.com'));

    // Assess
    expect(error).toBeInstanceOf(VendorNetworkError);
    expect(error).toMatchObject({ code: 'ECONNREFUSED', requestNotSent: true });
    expect(settings.sleep.delays).toHaveLength(2);
  });

  it('does not retry a recon after a 503', async () => {
    // Prepare
    const { client } = breachClient();
    sim.addFault({ api: 'breach', method: 'POST', path: '/recon', fault: { type: 'status', status: 503 } });
    const before = sim.requestCount('POST /recon');

    // Act
    const error = await rejectionOf(client.recon({ name: 'Ann Example', emails: ['ann@example.com'] }));

    // Assess
    expect(error).toMatchObject({ name: 'VendorUnavailableError', status: 503 });
    expect(sim.requestCount('POST /recon') - before).toBe(1);
  });

  it('retries a recon after a 429', async () => {
    // Prepare
    const { client } = breachClient();
    sim.addFault({ api: 'breach', method: 'POST', path: '/recon', fault: { type: 'status', status: 429 } });
    const before = sim.requestCount('POST /recon');

    // Act
    const result = await client.recon({ name: 'Ann Example', emails: ['ann@example.com'] });

    // Assess
    expect(result.status).toBe('success');
    expect(sim.requestCount('POST /recon') - before).toBe(2);
  });

  it('refreshes the credential once for a start scan refused with 401 (a 401 proves it was not processed)', async () => {
    // Prepare
    const credentials = secretStoreCredentials(sim);
    const { client } = scanClient({ credentials });
    sim.replaceKey();
    const before = sim.requestCount('POST /scan');

    // Act
    const started = await client.startScan('rekeyed.example.com');

    // Assess
    expect(started.uuid).toBeDefined();
    expect(sim.requestCount('POST /scan') - before).toBe(2);
    expect(credentials.calls.filter((c) => c.forceRefresh)).toHaveLength(1);
  });
});

describe('attempt logging', () => {
  it('logs one debug line per attempt with operation, status, attempt and duration', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient();
    sim.addFault({ api: 'scan', path: '/status/', times: 2, fault: { type: 'status', status: 502 } });

    // Act
    await client.getStatus(uuid);

    // Assess
    expect(
      settings.logger.lines.map((l) => [l.level, l.extra?.attempt, l.extra?.status, l.extra?.decision]),
    ).toEqual([
      ['debug', 1, 502, 'retry'],
      ['debug', 2, 502, 'retry'],
      ['debug', 3, 200, 'ok'],
    ]);
    for (const line of settings.logger.lines) {
      expect(line.extra).toMatchObject({ api: 'scan', operation: 'scan.getStatus', ms: expect.any(Number) });
    }
  });
});

describe('settings', () => {
  it('refuses a base URL that carries credentials or a query', () => {
    // Act
    const act = () =>
      new ScanClient({ baseUrl: 'https://user:pw@vendor.example/?k=1', credentials: fixedCredentials('k') });

    // Assess
    expect(act).toThrow(/scan baseUrl/);
  });

  it('uses the injected sleep, never a real timer, for backoff', async () => {
    // Prepare
    const uuid = await finishedScan();
    const sleep = recordingSleep();
    const { client } = scanClient({
      sleep,
      random: () => 1,
      retry: { baseDelayMs: 30_000, maxDelayMs: 30_000 },
    });
    sim.addFault({ api: 'scan', path: '/status/', fault: { type: 'status', status: 500 } });
    const started = Date.now();

    // Act
    await client.getStatus(uuid);

    // Assess
    expect(sleep.delays).toEqual([30_000]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

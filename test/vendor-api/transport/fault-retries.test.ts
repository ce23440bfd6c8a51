/**
 * The fault matrix: every fault the simulator can script, against the client behaviour the design
 * asks for. Sleep is injected (recorded, never slept) and jitter is pinned, so the suite is fast
 * and the backoff arithmetic is exact. This half: throttling, server errors, timeouts and broken connections or bodies.
 */
import { describe, expect, it } from 'vitest';
import {
  VendorHttpError,
  VendorNetworkError,
  VendorResponseError,
  VendorThrottledError,
  VendorTimeoutError,
} from '#lambdas/platform/errors';
import { parseOutputName } from '#lambdas/scan/parse';
import { readAll } from '../../kit/digest.ts';
import { finishedScan, STATUS_ROUTE, scanClient, sim, useFaultSimulator } from './fault-fixture.ts';
import { rejectionOf } from './helpers.ts';

useFaultSimulator();

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

  it('waits Retry-After, then the jittered backoff on top', async () => {
    // Prepare
    const uuid = await finishedScan();
    const { client, settings } = scanClient({ random: () => 1, retry: { baseDelayMs: 4_000 } });
    sim.addFault({ api: 'scan', path: '/status/', fault: { type: 'status', status: 429, retryAfter: 1 } });

    // Act
    await client.getStatus(uuid);

    // Assess
    expect(settings.sleep.delays).toEqual([5_000]);
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
    const error = await rejectionOf(client.getOutput(parseOutputName('report'), uuid));

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
    const download = await client.getOutput(parseOutputName('report'), uuid);

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
    const download = await client.getOutput(parseOutputName('report'), uuid);

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
    const download = await client.getOutput(parseOutputName('logs'), uuid);

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

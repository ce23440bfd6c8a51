/**
 * The fault matrix: every fault the simulator can script, against the client behaviour the design
 * asks for. Sleep is injected (recorded, never slept) and jitter is pinned, so the suite is fast
 * and the backoff arithmetic is exact. This half: credentials, non-idempotent calls, attempt logging and settings.
 */
import { describe, expect, it } from 'vitest';
import { VendorAuthError, VendorNetworkError, VendorTimeoutError } from '#lambdas/platform/errors';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import { closedPort, relay } from '../../kit/http.ts';
import { breachClient, finishedScan, scanClient, sim, useFaultSimulator } from './fault-fixture.ts';
import {
  fixedCredentials,
  midRotationCredentials,
  recordingSleep,
  rejectionOf,
  secretStoreCredentials,
} from './helpers.ts';

useFaultSimulator();

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
    expect(settings.logger.lines.map((l) => l.fields.errorCode ?? l.fields.status)).toEqual([
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
      settings.logger.lines.map((l) => [l.level, l.fields.attempt, l.fields.status, l.fields.decision]),
    ).toEqual([
      ['debug', 1, 502, 'retry'],
      ['debug', 2, 502, 'retry'],
      ['debug', 3, 200, 'ok'],
    ]);
    for (const line of settings.logger.lines) {
      expect(line.fields).toMatchObject({ api: 'scan', operation: 'scan.getStatus', ms: expect.any(Number) });
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

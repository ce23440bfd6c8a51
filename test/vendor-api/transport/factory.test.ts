import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '#lambdas/platform/errors';
import { createVendorClients } from '#lambdas/vendor-api/clients';
import { parseRetryAfter } from '#lambdas/vendor-api/transport/retry-policy';
import type { VendorSimulator } from '#local/simulator/types';
import { startSimulator } from '../../kit/simulator.ts';
import { fixedCredentials, rejectionOf, testSettings } from './helpers.ts';

let sim: VendorSimulator;

beforeAll(async () => {
  sim = await startSimulator();
});

afterAll(async () => {
  await sim.close();
});

describe('createVendorClients', () => {
  it('builds three clients, each with its own base URL and credential provider', async () => {
    // Prepare
    const scanCredentials = fixedCredentials(sim.apiKey);
    const keysCredentials = fixedCredentials(sim.apiKey);
    const breachCredentials = fixedCredentials(sim.apiKey);
    const { sleep, random, logger } = testSettings(sim);
    const clients = createVendorClients({
      scanApiUrl: sim.url,
      keysApiUrl: `${sim.url}/`,
      breachApiUrl: sim.url,
      scanCredentials,
      keysCredentials,
      breachCredentials,
      orgUuid: sim.orgUuid,
      sleep,
      random,
      logger,
    });

    // Act
    await clients.scan.getStats();
    await clients.keys?.getKeyInfo();
    await clients.keys?.getKeyInfo();
    await clients.breach.listReports();
    await clients.close();

    // Assess
    expect([scanCredentials.calls, keysCredentials.calls, breachCredentials.calls]).toEqual([1, 2, 1]);
    expect(new Set(logger.lines.map((l) => l.fields.api))).toEqual(new Set(['scan', 'keys', 'breach']));
  });

  it('leaves the keys client out when no org uuid is configured', async () => {
    // Act
    const clients = createVendorClients({
      scanApiUrl: sim.url,
      keysApiUrl: sim.url,
      breachApiUrl: sim.url,
      scanCredentials: fixedCredentials('k'),
      keysCredentials: fixedCredentials('k'),
      breachCredentials: fixedCredentials('k'),
    });

    // Assess
    expect(clients.keys).toBeUndefined();
    await clients.close();
  });

  it('refuses a base URL that is not http(s) with an error naming the API', () => {
    // Act
    const act = () =>
      createVendorClients({
        scanApiUrl: 'ftp://vendor.example',
        keysApiUrl: sim.url,
        breachApiUrl: sim.url,
        scanCredentials: fixedCredentials('k'),
        keysCredentials: fixedCredentials('k'),
        breachCredentials: fixedCredentials('k'),
      });

    // Assess
    expect(act).toThrow(ConfigurationError);
    expect(act).toThrow(/scan baseUrl/);
  });
});

describe('credential provider output', () => {
  it.each([
    ['an empty key', ''],
    ['a key with a line break', 'sk_abc\r\nX-Injected: 1'],
  ])('refuses %s with a ConfigurationError before sending', async (_what, key) => {
    // Prepare
    const clients = createVendorClients({
      scanApiUrl: sim.url,
      keysApiUrl: sim.url,
      breachApiUrl: sim.url,
      scanCredentials: fixedCredentials(key),
      keysCredentials: fixedCredentials(key),
      breachCredentials: fixedCredentials(key),
    });
    const before = sim.requestCount('GET /stats');

    // Act
    const error = await rejectionOf(clients.scan.getStats());

    // Assess
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).not.toContain('X-Injected');
    expect(sim.requestCount('GET /stats')).toBe(before);
    await clients.close();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');

  it.each([
    ['delta-seconds', '3', 3_000],
    ['delta-seconds with spaces', ' 10 ', 10_000],
    ['zero', '0', 0],
    ['an HTTP date in the future', 'Sat, 21 Nov 2026 12:00:05 GMT', 5_000],
    ['an HTTP date in the past', 'Sat, 21 Nov 2026 11:59:00 GMT', 0],
    ['garbage', 'soon', undefined],
    ['a negative number', '-5', undefined],
    ['nothing', undefined, undefined],
  ])('reads %s', (_what, value, expected) => {
    // Act
    const ms = parseRetryAfter(value, now);

    // Assess
    expect(ms).toBe(expected);
  });
});

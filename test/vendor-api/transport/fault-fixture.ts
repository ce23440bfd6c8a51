/**
 * The vendor-api tests' shared simulator and clients: sleep is injected (recorded, never slept)
 * and jitter is pinned by `testSettings`, so the backoff arithmetic is exact. `sim` is a live
 * binding, set once `useFaultSimulator()`'s beforeAll has run.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import { KeysClient } from '#lambdas/vendor-api/keys/keys-client';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import type { VendorHttpSettings } from '#lambdas/vendor-api/transport/types';
import type { VendorSimulator } from '#local/simulator/types';
import { startSimulator } from '../../kit/simulator.ts';
import { testSettings } from './helpers.ts';

export let sim: VendorSimulator;
const clients: { close(): Promise<void> }[] = [];

/** One simulator for the calling file; faults are cleared and clients closed after each test. */
export function useFaultSimulator(): void {
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
}

export function scanClient(overrides: Partial<VendorHttpSettings> = {}) {
  const settings = testSettings(sim, overrides);
  const client = new ScanClient(settings);
  clients.push(client);
  return { client, settings };
}

export function breachClient(overrides: Partial<VendorHttpSettings> = {}) {
  const settings = testSettings(sim, overrides);
  const client = new BreachClient(settings);
  clients.push(client);
  return { client, settings };
}

/** A key-management client for the simulator's organisation. */
export function keysClient(overrides: Partial<VendorHttpSettings> = {}) {
  const settings = testSettings(sim, overrides);
  const client = new KeysClient({ ...settings, orgUuid: sim.orgUuid });
  clients.push(client);
  return { client, settings };
}

/** A scan that exists and is complete (the simulator finishes scans on the first poll here). */
export async function finishedScan(): Promise<string> {
  const { client } = scanClient();
  const { uuid } = await client.startScan('fixture.example.com');
  await client.getStatus(uuid);
  return uuid;
}

export const STATUS_ROUTE = 'GET /status/{uuid}';

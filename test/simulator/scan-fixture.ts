/**
 * The scanning API tests' simulator: one per file, with scans of broken.example.com and fail-*
 * failing, and faults cleared before every test. `sim` is a live binding, set by the beforeAll
 * that useScanSimulator registers.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import { bearer } from '../kit/simulator.ts';

export let sim: VendorSimulator;

export function useScanSimulator(): void {
  beforeAll(async () => {
    sim = await startVendorSimulator({ failingDomains: ['broken.example.com', /^fail-/] });
  });

  afterAll(async () => {
    await sim.close();
  });

  beforeEach(() => {
    sim.clearFaults();
  });
}

/** A GET on the simulator, with the API key unless other headers are given. */
export function get(path: string, headers: Record<string, string> = bearer(sim.apiKey)) {
  return fetch(`${sim.url}${path}`, { headers });
}

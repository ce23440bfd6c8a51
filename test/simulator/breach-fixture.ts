/**
 * The breach API tests' simulator, whose clock starts at the same instant before every test and
 * moves only when a test moves it. `sim` is a live binding, set by useBreachSimulator's beforeAll.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import { rawRequest } from '../kit/http.ts';
import { apiKeyHeader } from '../kit/simulator.ts';

const START = '2026-11-02T10:00:00.000Z';
export let sim: VendorSimulator;
let clock = new Date(START);

/** Moves the simulator's clock forward. */
export function advanceClock(ms: number): void {
  clock = new Date(clock.getTime() + ms);
}

/** Registers the hooks: one simulator for the file, faults cleared and the clock reset per test. */
export function useBreachSimulator(): void {
  beforeAll(async () => {
    sim = await startVendorSimulator({ now: () => clock });
  });

  afterAll(async () => {
    await sim.close();
  });

  beforeEach(() => {
    sim.clearFaults();
    clock = new Date(START);
  });
}

export interface ReconBody {
  status: string;
  output: string;
  total_breaches: number;
}

export function recon(body: unknown, headers: Record<string, string> = apiKeyHeader(sim.apiKey)) {
  return fetch(`${sim.url}/recon`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Follows the download chain by hand, returning each hop. */
export async function downloadHops(reportName: string) {
  const first = await rawRequest(`${sim.url}/download/${encodeURIComponent(reportName)}`, {
    headers: apiKeyHeader(sim.apiKey),
  });
  const second = await rawRequest(new URL(String(first.headers.location), sim.url).href, {
    headers: apiKeyHeader(sim.apiKey),
  });
  const third = await rawRequest(String(second.headers.location));
  return { first, second, third };
}

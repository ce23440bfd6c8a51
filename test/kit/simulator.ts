/**
 * The vendor simulator on loopback for tests, and the few calls most simulator tests start from:
 * auth headers, starting a scan and polling it to its end.
 */
import { startVendorSimulator } from '#local/simulator/index';
import type { SimulatorOptions, VendorSimulator } from '#local/simulator/types';

/**
 * A simulator whose scans finish on the first poll unless `pollsToFinish` says otherwise: most
 * tests are about what happens after a scan, not how long it takes.
 */
export function startSimulator(options: SimulatorOptions = {}): Promise<VendorSimulator> {
  return startVendorSimulator({ pollsToFinish: 0, ...options });
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

export function apiKeyHeader(key: string): Record<string, string> {
  return { 'x-api-key': key };
}

export async function startScan(sim: VendorSimulator, domain: string): Promise<string> {
  const res = await fetch(`${sim.url}/scan`, {
    method: 'POST',
    headers: { ...bearer(sim.apiKey), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ domain }),
  });
  if (res.status !== 200) throw new Error(`start scan answered ${res.status}`);
  return ((await res.json()) as { uuid: string }).uuid;
}

export interface StatusBody {
  uuid: string;
  domain: string;
  status: string;
  progress: number;
  created_at: string;
  updated_at: string;
  error?: string;
}

export async function pollStatus(sim: VendorSimulator, uuid: string): Promise<StatusBody> {
  const res = await fetch(`${sim.url}/status/${uuid}`, { headers: bearer(sim.apiKey) });
  if (res.status !== 200) throw new Error(`status answered ${res.status}`);
  return (await res.json()) as StatusBody;
}

/** Starts a scan and polls it until it finished (at most `limit` polls). */
export async function finishedScan(sim: VendorSimulator, domain: string, limit = 20): Promise<string> {
  const uuid = await startScan(sim, domain);
  for (let i = 0; i < limit; i += 1) {
    const { status } = await pollStatus(sim, uuid);
    if (status === 'completed' || status === 'failed') return uuid;
  }
  throw new Error(`scan of ${domain} did not finish in ${limit} polls`);
}

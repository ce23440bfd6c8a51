/**
 * StartScan settles a start whose answer was lost from the vendor's listing: for each fault on the
 * start, the outcome is right and the vendor never holds two scans for one start.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VendorThrottledError } from '#lambdas/platform/errors';
import { createMetricsRecorder } from '#lambdas/platform/metrics';
import type { ScanApi, ScanDeps } from '#lambdas/scan/deps';
import { createScanDeps } from '#lambdas/scan/deps';
import { ScanStartUnresolvedError } from '#lambdas/scan/errors';
import type { ListFields } from '#lambdas/scan/reconcile-settings';
import { createScanSettings } from '#lambdas/scan/settings';
import { startScan } from '#lambdas/scan/start-scan';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import type { Fault, VendorSimulator } from '#local/simulator/types';
import { createMemoryLogger } from '../kit/loggers.ts';
import { startSimulator } from '../kit/simulator.ts';
import { RESULTS_BUCKET } from './fixture.ts';

let sim: VendorSimulator;
let client: ScanClient;

beforeAll(async () => {
  sim = await startSimulator({ pollsToFinish: 2 });
  client = new ScanClient({
    baseUrl: sim.url,
    credentials: async () => sim.apiKey,
    // One attempt per call: each fault reaches the settling; short enough for a hang to time out.
    retry: { maxAttempts: 1 },
    requestTimeoutMs: 400,
    sleep: async () => {},
  });
});

afterEach(() => {
  sim.clearFaults();
  sim.setListingLag(0);
});

afterAll(async () => {
  await client.close();
  await sim.close();
});

function bed(options: { scanClient?: ScanApi; listFields?: ListFields } = {}) {
  const metrics = createMetricsRecorder();
  const slept: number[] = [];
  const deps: ScanDeps = {
    ...createScanDeps({
      s3: undefined as never,
      scanClient: options.scanClient ?? client,
      logger: createMemoryLogger(),
      metrics,
      settings: createScanSettings({
        resultsBucket: RESULTS_BUCKET,
        ...(options.listFields ? { listFields: options.listFields } : {}),
      }),
      // The vendor stamps scans with the real time: settling compares against the same clock.
      clock: () => new Date(),
    }),
    sleep: async (ms) => {
      slept.push(ms);
    },
    random: () => 0.5,
  };
  const settled = () =>
    metrics.recorded.filter((m) => m.name === 'StartsSettled').map((m) => m.dimensions.outcome);
  return { deps, slept, settled };
}

function onStart(fault: Fault) {
  sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault });
}

describe('a start whose answer was lost', () => {
  it.each([
    ['a 503 before creation', { type: 'status', status: 503 }],
    ['a reset before creation', { type: 'refuse' }],
  ] satisfies [string, Fault][])(
    'is sent again after %s, when the listing shows no scan',
    async (_, fault) => {
      // Prepare
      const { deps, settled, slept } = bed();
      onStart(fault);
      const domain = `again-${fault.type}.example.com`;

      // Act
      const state = await startScan(deps, { domain });

      // Assess
      expect(state.settledStart).toBe('retried');
      expect(sim.scansOf(domain).map((s) => s.uuid)).toEqual([state.scanUuid]);
      expect(settled()).toEqual(['retried']);
      // Two looks a lag wait apart, then the backoff before the second start.
      expect(slept).toEqual([2_000, 250]);
      expect(sim.requestCount('POST /scan')).toBeGreaterThanOrEqual(2);
    },
  );

  it.each([
    ['a 503 after creation', { type: 'status', status: 503, phase: 'after' }],
    ['a reset after creation', { type: 'lose-response' }],
    ['a timeout after creation', { type: 'hang', phase: 'after' }],
  ] satisfies [string, Fault][])('adopts the scan after %s, without a second start', async (_, fault) => {
    // Prepare
    const { deps, settled } = bed();
    onStart(fault);
    const domain = `adopt-${fault.type}.example.com`;
    const starts = sim.requestCount('POST /scan');

    // Act
    const state = await startScan(deps, { domain });

    // Assess
    expect(state.settledStart).toBe('adopted');
    expect(sim.scansOf(domain).map((s) => s.uuid)).toEqual([state.scanUuid]);
    expect(sim.requestCount('POST /scan')).toBe(starts + 1);
    expect(settled()).toEqual(['adopted']);
  });

  it('looks again after the lag wait when the listing lags by one, and adopts', async () => {
    // Prepare
    const { deps, settled, slept } = bed();
    sim.setListingLag(1);
    onStart({ type: 'status', status: 503, phase: 'after' });
    const domain = 'lagging.example.com';

    // Act
    const state = await startScan(deps, { domain });

    // Assess
    expect(state.settledStart).toBe('adopted');
    expect(slept).toEqual([2_000]);
    expect(sim.scansOf(domain).map((s) => s.uuid)).toEqual([state.scanUuid]);
    expect(settled()).toEqual(['adopted']);
  });

  it('is unresolved when the listing is unavailable, and sends no second start', async () => {
    // Prepare
    const { deps, settled } = bed();
    onStart({ type: 'status', status: 503, phase: 'after' });
    sim.addFault({ api: 'scan', method: 'GET', path: '/scans', fault: { type: 'status', status: 503 } });
    const domain = 'blind.example.com';
    const starts = sim.requestCount('POST /scan');

    // Act
    const attempt = startScan(deps, { domain });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(ScanStartUnresolvedError);
    await expect(attempt).rejects.toThrow(/scan listing could not be read \(VendorUnavailableError\)/);
    expect(sim.scansOf(domain)).toHaveLength(1);
    expect(sim.requestCount('POST /scan')).toBe(starts + 1);
    expect(settled()).toEqual(['unresolved']);
  });

  it('is unresolved when the listing cannot be parsed', async () => {
    // Prepare
    const { deps } = bed();
    onStart({ type: 'status', status: 502, phase: 'after' });
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/scans',
      fault: { type: 'status', status: 200, body: '{"nope":1}' },
    });

    // Act
    const attempt = startScan(deps, { domain: 'garbled.example.com' });

    // Assess
    await expect(attempt).rejects.toThrow(/could not be parsed: no list of scans/);
    expect(sim.scansOf('garbled.example.com')).toHaveLength(1);
  });

  describe('from a vendor whose listing has its own field names (scan.reconciliation.listFields)', () => {
    // The simulator's listing, as a vendor that nests it and names its fields otherwise would send it.
    const renamed = (): ScanApi =>
      Object.assign(Object.create(client) as ScanApi, {
        listScans: async () => {
          const { raw } = await client.listScans();
          const scans = (raw as { scans: Record<string, unknown>[] }).scans;
          return {
            raw: {
              payload: {
                jobs: scans.map((scan) => ({
                  job_id: scan.uuid,
                  target: scan.domain,
                  phase: scan.status,
                  opened: scan.created_at,
                })),
              },
            },
          };
        },
      });
    const listFields = {
      list: 'payload.jobs',
      uuid: 'job_id',
      domain: 'target',
      status: 'phase',
      createdAt: 'opened',
    };

    it('adopts the scan, reading the listing where the configuration says', async () => {
      // Prepare
      const { deps, settled } = bed({ scanClient: renamed(), listFields });
      onStart({ type: 'lose-response' });
      const domain = 'renamed.example.com';

      // Act
      const state = await startScan(deps, { domain });

      // Assess
      expect(state.settledStart).toBe('adopted');
      expect(sim.scansOf(domain).map((s) => s.uuid)).toEqual([state.scanUuid]);
      expect(settled()).toEqual(['adopted']);
    });

    it('is unresolved without the configured paths: the listing cannot be read', async () => {
      // Prepare
      const { deps } = bed({ scanClient: renamed() });
      onStart({ type: 'lose-response' });

      // Act
      const attempt = startScan(deps, { domain: 'unconfigured.example.com' });

      // Assess
      await expect(attempt).rejects.toThrow(/could not be parsed: no list of scans/);
    });
  });

  it('is unresolved when two scans of the domain were created since the start, and adopts neither', async () => {
    // Prepare: another start of the same domain (a second list run, say) lands at the same time.
    const { deps, settled } = bed();
    const domain = 'twice.example.com';
    await client.startScan(domain);
    onStart({ type: 'status', status: 503, phase: 'after' });

    // Act
    const attempt = startScan(deps, { domain });

    // Assess
    await expect(attempt).rejects.toThrow(/2 scans of this domain were created since the start/);
    // One scan from this start, one from the other: never two for one start.
    expect(sim.scansOf(domain)).toHaveLength(2);
    expect(settled()).toEqual(['unresolved']);
  });

  it('sends no second start when the invocation has too little time left', async () => {
    // Prepare
    const { deps, settled } = bed();
    onStart({ type: 'status', status: 503 });
    const domain = 'late.example.com';

    // Act
    const attempt = startScan(deps, { domain }, { timeLeftMs: () => 10_000 });

    // Assess
    await expect(attempt).rejects.toThrow(/too little of the invocation is left/);
    expect(sim.scansOf(domain)).toHaveLength(0);
    expect(settled()).toEqual(['unresolved']);
  });

  it('does not settle a start that provably did nothing (429): it surfaces for the state machine to retry', async () => {
    // Prepare
    const { deps, settled } = bed();
    onStart({ type: 'status', status: 429 });
    const listings = sim.requestCount('GET /scans');

    // Act
    const attempt = startScan(deps, { domain: 'busy.example.com' });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(VendorThrottledError);
    expect(sim.requestCount('GET /scans')).toBe(listings);
    expect(settled()).toEqual([]);
  });
});

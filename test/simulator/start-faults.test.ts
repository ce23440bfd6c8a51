/**
 * Faults on a start that strike before or after its scan is created, and a listing that lags behind
 * starts: what StartScan's settling is tested against (test/scan/settle-start.test.ts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { faultRuleFromJson } from '#local/simulator/fault-json';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import { bearer } from '../kit/simulator.ts';

let sim: VendorSimulator;

beforeAll(async () => {
  sim = await startVendorSimulator({ pollsToFinish: 0 });
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => {
  sim.clearFaults();
  sim.setListingLag(0);
});

function postScan(domain: string, signal?: AbortSignal) {
  return fetch(`${sim.url}/scan`, {
    method: 'POST',
    headers: { ...bearer(sim.apiKey), 'content-type': 'application/x-www-form-urlencoded' },
    body: `domain=${domain}`,
    ...(signal ? { signal } : {}),
  });
}

async function listedUuids(domain: string): Promise<string[]> {
  const res = await fetch(`${sim.url}/scans`, { headers: bearer(sim.apiKey) });
  const body = (await res.json()) as { scans: { uuid: string; domain: string }[] };
  return body.scans.filter((scan) => scan.domain === domain).map((scan) => scan.uuid);
}

describe('start faults before or after the scan is created', () => {
  it('creates no scan for a 503 before handling (the default phase)', async () => {
    // Prepare
    sim.addFault({ method: 'POST', path: '/scan', fault: { type: 'status', status: 503, phase: 'before' } });

    // Act
    const res = await postScan('before-503.example.com');

    // Assess
    expect(res.status).toBe(503);
    expect(sim.scansOf('before-503.example.com')).toHaveLength(0);
  });

  it('creates the scan and then answers 503 with phase after', async () => {
    // Prepare
    sim.addFault({ method: 'POST', path: '/scan', fault: { type: 'status', status: 503, phase: 'after' } });

    // Act
    const res = await postScan('after-503.example.com');

    // Assess
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'service_unavailable' });
    const held = sim.scansOf('after-503.example.com');
    expect(held).toHaveLength(1);
    expect(await listedUuids('after-503.example.com')).toEqual([held[0]?.uuid]);
  });

  it('creates the scan and never answers with a hang after', async () => {
    // Prepare
    sim.addFault({ method: 'POST', path: '/scan', fault: { type: 'hang', phase: 'after' } });

    // Act
    const attempt = postScan('after-hang.example.com', AbortSignal.timeout(300));

    // Assess
    await expect(attempt).rejects.toThrow(/aborted|timeout/i);
    expect(sim.scansOf('after-hang.example.com')).toHaveLength(1);
  });

  it('creates nothing with a hang before', async () => {
    // Prepare
    sim.addFault({ method: 'POST', path: '/scan', fault: { type: 'hang' } });

    // Act
    const attempt = postScan('before-hang.example.com', AbortSignal.timeout(300));

    // Assess
    await expect(attempt).rejects.toThrow(/aborted|timeout/i);
    expect(sim.scansOf('before-hang.example.com')).toHaveLength(0);
  });

  it('accepts the phase in control-plane JSON and refuses an unknown one, naming the field', () => {
    // Act
    const rule = faultRuleFromJson({
      method: 'post',
      path: '/scan',
      fault: { type: 'hang', phase: 'after' },
    });

    // Assess
    expect(rule.fault).toEqual({ type: 'hang', phase: 'after' });
    expect(() => faultRuleFromJson({ fault: { type: 'status', status: 503, phase: 'later' } })).toThrow(
      /status fault phase must be 'before' or 'after'; got "later"/,
    );
    expect(() =>
      faultRuleFromJson({ fault: { type: 'status', status: 503, phase: 'after', echoRequest: true } }),
    ).toThrow(/echoRequest .* not with phase after/);
  });
});

describe('listing lag', () => {
  it('leaves a new scan out of the next N listings, then shows it', async () => {
    // Prepare
    sim.setListingLag(2);
    const res = await postScan('lagging.example.com');
    const { uuid } = (await res.json()) as { uuid: string };

    // Act
    const first = await listedUuids('lagging.example.com');
    const second = await listedUuids('lagging.example.com');
    const third = await listedUuids('lagging.example.com');

    // Assess
    expect([first, second, third]).toEqual([[], [], [uuid]]);
    expect(sim.scansOf('lagging.example.com').map((scan) => scan.uuid)).toEqual([uuid]);
  });

  it('is set over the control plane too, and refuses a negative lag', async () => {
    // Act
    const post = (listings: unknown) =>
      fetch(`${sim.url}/__simulator/listing-lag`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ listings }),
      });
    const ok = await post(1);
    const bad = await post(-1);

    // Assess
    expect(ok.status).toBe(200);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ message: expect.stringContaining('listingLag') });
    const res = await postScan('lag-one.example.com');
    const { uuid } = (await res.json()) as { uuid: string };
    expect(await listedUuids('lag-one.example.com')).toEqual([]);
    expect(await listedUuids('lag-one.example.com')).toEqual([uuid]);
  });
});

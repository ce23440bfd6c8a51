import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FaultBook } from '#local/simulator/faults';
import { bearer, finishedScan, startScan, startSimulator } from '../kit/simulator.ts';

const target = (subject: string) => ({ api: 'scan' as const, method: 'GET', path: '/status/x', subject });

function bookWithRules(seed: number): FaultBook {
  const book = new FaultBook(seed);
  book.add({ api: 'scan', times: Number.POSITIVE_INFINITY, probability: 0.3, fault: { type: 'hang' } });
  book.add({ api: 'scan', times: Number.POSITIVE_INFINITY, probability: 0.3, fault: { type: 'refuse' } });
  return book;
}

describe('seeded faults', () => {
  it('strike each subject the same way whatever order the requests arrive in', () => {
    // Prepare
    const subjects = Array.from({ length: 40 }, (_, i) => `GET /status d${i}.example.com#0`);
    const inOrder = bookWithRules(24);
    const reversed = bookWithRules(24);
    const otherSeed = bookWithRules(25);

    // Act: three requests per subject, the second book seeing them in the opposite order.
    const take = (book: FaultBook, order: readonly string[]) => {
      const seen = new Map<string, (string | undefined)[]>();
      for (let round = 0; round < 3; round++) {
        for (const subject of order)
          seen.set(subject, [...(seen.get(subject) ?? []), book.take(target(subject))?.type]);
      }
      return Object.fromEntries([...seen].sort(([a], [b]) => a.localeCompare(b)));
    };
    const first = take(inOrder, subjects);
    const second = take(reversed, [...subjects].reverse());
    const third = take(otherSeed, subjects);

    // Assess: the same seed, the same faults per subject; some requests struck and some spared.
    expect(second).toEqual(first);
    const all = Object.values(first).flat();
    expect(all.filter((type) => type === undefined).length).toBeGreaterThan(20);
    expect(all.filter((type) => type !== undefined).length).toBeGreaterThan(20);
    expect(third).not.toEqual(first);
  });

  it('key requests about a scan on its domain over HTTP, so two simulators with one seed agree', async () => {
    // Prepare: the same domains polled in opposite orders by two simulators of the same seed.
    const statuses = async (order: readonly string[]): Promise<Record<string, number[]>> => {
      const sim = await startSimulator({ faultSeed: 7, pollsToFinish: 50 });
      try {
        sim.addFault({
          api: 'scan',
          path: '/status/',
          times: Number.POSITIVE_INFINITY,
          probability: 0.5,
          fault: { type: 'status', status: 503 },
        });
        const uuids = new Map<string, string>();
        for (const domain of order) uuids.set(domain, await startScan(sim, domain));
        const seen: Record<string, number[]> = {};
        for (let round = 0; round < 4; round++) {
          for (const domain of order) {
            const res = await fetch(`${sim.url}/status/${uuids.get(domain)}`, {
              headers: bearer(sim.apiKey),
            });
            await res.arrayBuffer();
            seen[domain] = [...(seen[domain] ?? []), res.status];
          }
        }
        return seen;
      } finally {
        await sim.close();
      }
    };
    const domains = Array.from({ length: 12 }, (_, i) => `seeded-${i}.example.com`);

    // Act
    const forwards = await statuses(domains);
    const backwards = await statuses([...domains].reverse());

    // Assess
    expect(backwards).toEqual(forwards);
    expect(Object.values(forwards).flat()).toContain(503);
    expect(Object.values(forwards).flat()).toContain(200);
  });

  it('records the length and SHA-256 of every output it served', async () => {
    // Prepare
    const sim = await startSimulator({ reportBytes: 4096, logsBytes: 2048 });
    try {
      const uuid = await finishedScan(sim, 'served.example.com');

      // Act
      const res = await fetch(`${sim.url}/report/${uuid}`, { headers: bearer(sim.apiKey) });
      const body = Buffer.from(await res.arrayBuffer());

      // Assess: logs were never asked for, so only the report is recorded.
      expect(sim.outputsServed()).toEqual([
        {
          domain: 'served.example.com',
          uuid,
          output: 'report',
          bytes: body.length,
          sha256: createHash('sha256').update(body).digest('hex'),
        },
      ]);
    } finally {
      await sim.close();
    }
  });
});

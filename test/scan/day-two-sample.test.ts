/**
 * The statistics behind the poll bench's day-2 hit rate on a sample of a large list: the sample is
 * uniform and without repeats, and the 95 % interval is Wilson's.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uniformSample, wilsonInterval } from '../../bench/poll-learning.ts';
import { seededRandom } from '../../local/simulator/faults.ts';

describe('the day-2 sample', () => {
  it('draws distinct items of the list, all of them when the list is shorter than the sample', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 600 }),
        fc.integer(),
        (size, count, seed) => {
          const items = Array.from({ length: size }, (_, i) => i);
          const sample = uniformSample(items, count, seededRandom(seed));
          expect(sample).toHaveLength(Math.min(size, count));
          expect(new Set(sample).size).toBe(sample.length);
          for (const item of sample) expect(item >= 0 && item < size).toBe(true);
        },
      ),
      { seed: 45, numRuns: 200 },
    );
  });

  it('reaches every part of the list evenly (each tenth within a few percent of its share)', () => {
    const items = Array.from({ length: 100_000 }, (_, i) => i);
    const sample = uniformSample(items, 20_000, seededRandom(45));
    const tenths = Array.from(
      { length: 10 },
      (_, t) => sample.filter((i) => Math.floor(i / 10_000) === t).length,
    );
    for (const count of tenths) expect(Math.abs(count - 2_000)).toBeLessThan(200);
  });
});

describe('the Wilson 95 % interval', () => {
  it('matches the published value for 0 of 10 and holds the observed rate inside [0, 1]', () => {
    const [low, high] = wilsonInterval(0, 10);
    expect(low).toBe(0);
    expect(high).toBeCloseTo(0.2775, 4);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (n, share) => {
          const hits = Math.round(share * n);
          const [lo, hi] = wilsonInterval(hits, n);
          expect(lo).toBeGreaterThanOrEqual(0);
          expect(hi).toBeLessThanOrEqual(1);
          expect(lo).toBeLessThanOrEqual(hits / n + 1e-12);
          expect(hi).toBeGreaterThanOrEqual(hits / n - 1e-12);
        },
      ),
      { seed: 45, numRuns: 300 },
    );
  });
});

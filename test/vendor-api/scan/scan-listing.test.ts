/** Tolerant reading of `GET /scans` and `GET /stats`, whose shapes the seed does not show. */
import { describe, expect, it } from 'vitest';
import {
  MAX_STATISTICS,
  readScanListing,
  readVendorStatistics,
  timeOf,
} from '#lambdas/vendor-api/scan/scan-listing';

const UUID = '0b7c3f7e-2d1a-4c36-9f0e-6a1f4c2b9d10';

describe('readScanListing', () => {
  it.each([
    ['a bare array', [{ uuid: UUID, domain: 'a.example.com' }]],
    ['an envelope', { scans: [{ uuid: UUID, domain: 'a.example.com' }] }],
    ['a nested envelope', { data: { items: [{ scan_uuid: UUID, target: 'a.example.com' }] } }],
  ])('finds the list in %s', (_, raw) => {
    expect(readScanListing(raw).scans).toMatchObject([{ uuid: UUID, domain: 'a.example.com' }]);
  });

  it('normalises the uuid and domain, and classifies the status word with the vocabulary', () => {
    const { scans } = readScanListing({
      scans: [
        { id: UUID.toUpperCase(), host: 'WWW.Example.COM.', state: 'Done', created: 1_790_000_000 },
        { uuid: UUID, domain: 'b.example.com', status: 'exploded' },
        { uuid: UUID, domain: 'c.example.com' },
      ],
    });
    expect(scans).toEqual([
      {
        index: 0,
        uuid: UUID,
        domain: 'www.example.com',
        vendorStatus: 'Done',
        state: 'succeeded',
        createdAt: new Date(1_790_000_000_000),
      },
      {
        index: 1,
        uuid: UUID,
        domain: 'b.example.com',
        vendorStatus: 'exploded',
        state: 'unknown',
        createdAt: undefined,
      },
      {
        index: 2,
        uuid: UUID,
        domain: 'c.example.com',
        vendorStatus: undefined,
        state: 'unknown',
        createdAt: undefined,
      },
    ]);
  });

  it('names a configured path that finds nothing', () => {
    expect(readScanListing({ scans: [] }, { list: 'data.scans' }).unreadable).toEqual([
      { index: null, reason: 'no list of scans at "data.scans" in an object' },
    ]);
    expect(readScanListing([{ key: UUID, domain: 'a.example.com' }], { uuid: 'key.id' }).unreadable).toEqual([
      { index: 0, reason: 'no uuid ("key.id")' },
    ]);
  });
});

describe('timeOf', () => {
  it.each([
    ['2026-11-20T10:00:00Z', '2026-11-20T10:00:00.000Z'],
    [1_790_000_000, '2026-09-21T14:13:20.000Z'],
    [1_790_000_000_123, '2026-09-21T14:13:20.123Z'],
    ['1790000000', '2026-09-21T14:13:20.000Z'],
  ])('reads %j', (value, iso) => {
    expect(timeOf(value)?.toISOString()).toBe(iso);
  });

  it.each([[null], [''], ['yesterday'], [Number.NaN], [{}]])('gives up on %j', (value) => {
    expect(timeOf(value)).toBeUndefined();
  });
});

describe('readVendorStatistics', () => {
  it('keeps every numeric field by dot path and sums the counts per state of the first status-word object', () => {
    const stats = readVendorStatistics({
      total: 9,
      label: 'ignored',
      by_status: { queued: 1, running: 2, completed: 3, done: 1, failed: 1, cancelled: 1 },
      nested: { deeper: { deepest: { tooDeep: 5 } } },
    });
    expect(stats.numbers.map((n) => n.name)).toEqual([
      'total',
      'by_status.queued',
      'by_status.running',
      'by_status.completed',
      'by_status.done',
      'by_status.failed',
      'by_status.cancelled',
    ]);
    expect(stats).toMatchObject({ finished: 4, failed: 2, skipped: 1, unreadable: undefined });
  });

  it('takes configured paths over the status words, and says when the answer is not an object', () => {
    expect(
      readVendorStatistics(
        { completed: 99, totals: { ok: 5, ko: 2 } },
        { finished: 'totals.ok', failed: 'totals.ko' },
      ),
    ).toMatchObject({ finished: 5, failed: 2 });
    expect(readVendorStatistics({ totals: {} }, { finished: 'totals.ok' })).toMatchObject({
      finished: undefined,
    });
    expect(readVendorStatistics('42 scans')).toMatchObject({
      numbers: [],
      unreadable: 'the statistics are a string, not an object',
    });
  });

  it(`publishes at most ${MAX_STATISTICS} fields, and none whose name is unfit for a dimension`, () => {
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`field${i}`, i]));
    const stats = readVendorStatistics({ 'has space': 1, ...many });
    expect(stats.numbers).toHaveLength(MAX_STATISTICS);
    expect(stats.numbers.some((n) => n.name === 'has space')).toBe(false);
    expect(stats.skipped).toBe(61 - MAX_STATISTICS);
  });
});

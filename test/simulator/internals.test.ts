import { describe, expect, it } from 'vitest';
import { type ContentSource, generate, render } from '#local/simulator/content';
import { FaultBook } from '#local/simulator/faults';
import { slugify } from '#local/simulator/reports';
import { ScanStore } from '#local/simulator/scans';
import { UrlSigner } from '#local/simulator/signing';

const source = {
  uuid: '0f8fad5b-d9cb-469f-a165-70867728950e',
  domain: 'example.com',
  createdAt: new Date('2026-11-02T10:00:00.000Z'),
  finishedAt: new Date('2026-11-02T10:07:00.000Z'),
  outcome: 'completed' as const,
};

function text(kind: 'report' | 'logs' | 'debug', target: number, src = source): string {
  return Buffer.concat([...generate(kind, src, target)]).toString();
}

describe('scan store', () => {
  it('holds 100,000 scans with list and stats in step, deletions included', () => {
    // Prepare
    const store = new ScanStore({ pollsToFinish: 0, failingDomains: [/^f/] }, () => new Date());
    const scans = Array.from({ length: 100_000 }, (_, i) =>
      store.create(`${i % 10 === 0 ? 'f' : 'd'}${i}.example.com`),
    );

    // Act
    for (const scan of scans.slice(0, 50_000)) store.poll(scan);
    for (const scan of scans.slice(0, 1_000)) store.delete(scan.uuid);

    // Assess
    expect(store.stats()).toEqual({
      total: 99_000,
      by_status: { queued: 50_000, running: 0, completed: 44_100, failed: 4_900 },
    });
    expect([...store.list()]).toHaveLength(99_000);
  });
});

describe('scan outputs', () => {
  it('generates the same bytes for the same scan and different bytes for another', () => {
    // Prepare
    const other = { ...source, uuid: '7c9e6679-7425-40de-944b-e07fc1f90ae7' };

    for (const kind of ['report', 'logs', 'debug'] as const) {
      // Act
      const a = text(kind, 100_000);
      const b = text(kind, 100_000);
      const c = text(kind, 100_000, other);

      // Assess
      expect(b).toBe(a);
      expect(c).not.toBe(a);
    }
  });

  it('lands within a few hundred bytes of the target size', () => {
    for (const target of [4_096, 65_536, 1_000_000]) {
      for (const kind of ['report', 'logs', 'debug'] as const) {
        expect(Math.abs(text(kind, target).length - target)).toBeLessThan(600);
      }
    }
  });

  it('keeps every format valid even for a tiny target size', () => {
    // Act
    const report = JSON.parse(text('report', 0)) as { findings: unknown[] };
    const debug = text('debug', 0).trimEnd().split('\n');
    const logs = text('logs', 0);

    // Assess
    expect(report.findings).toHaveLength(1);
    expect(debug.map((line) => JSON.parse(line))).toHaveLength(1);
    expect(logs.endsWith('completed\n')).toBe(true);
  });

  it('computes length and ETag in one pass that match a later lazy stream', () => {
    // Prepare
    const reportContent = (src: ContentSource, target: number) => generate('report', src, target);

    // Act
    const first = render(reportContent, source, 300_000, undefined);
    const firstBytes = Buffer.concat([...first.body]);
    const later = render(reportContent, source, 300_000, first.meta);

    // Assess
    expect(first.meta.length).toBe(firstBytes.length);
    expect(Buffer.concat([...later.body]).equals(firstBytes)).toBe(true);
  });
});

describe('fault book', () => {
  it('matches a global RegExp on every request, not every other one', () => {
    // Prepare
    const book = new FaultBook();
    book.add({ path: /^\/stats/g, times: 3, fault: { type: 'hang' } });
    const target = { api: 'scan' as const, method: 'GET', path: '/stats' };

    // Act
    const taken = [book.take(target), book.take(target), book.take(target), book.take(target)];

    // Assess
    expect(taken.map((f) => f?.type)).toEqual(['hang', 'hang', 'hang', undefined]);
  });
});

describe('report names', () => {
  it.each([
    ['Ada Lovelace', 'ada-lovelace'],
    ['  Zoë   Ñúñez ', 'zoe-nunez'],
    ['李小龍', 'report'],
    ['a'.repeat(60), 'a'.repeat(40)],
  ])('slugs %j as %j', (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });
});

describe('URL signer', () => {
  it('accepts its own signature until the lifetime ends, and nothing else', () => {
    // Prepare
    let now = new Date('2026-11-02T10:00:00.000Z');
    const signer = new UrlSigner(60, () => now);
    const query = new URLSearchParams(signer.sign('reports/a b.zip'));

    // Act
    const valid = signer.verify('reports/a b.zip', query);
    const otherKey = signer.verify('reports/b.zip', query);
    now = new Date('2026-11-02T10:01:01.000Z');
    const expired = signer.verify('reports/a b.zip', query);

    // Assess
    expect([valid, otherKey, expired]).toEqual(['valid', 'mismatch', 'expired']);
    expect(signer.verify('reports/a b.zip', new URLSearchParams())).toBe('missing');
  });
});

/**
 * Huge or junk lists against the embedded S3: the prepare step checks the size before reading,
 * streams the parse, counts every line but keeps only samples, and the run always ends with a
 * summary.json that says what happened. Heap figures are printed for the closing note; the
 * assertion is only that the heap stays far below the function's memory, never a timing.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import { type ListDeps, prepareDomainList } from '#lambdas/domain-list/list';
import { writeListSummary } from '#lambdas/domain-list/list-summary';
import type { VendorLogger } from '#lambdas/platform/vendor-api/types';
import { type S3rverFixture, startS3rver } from '../../local/embedded-s3.ts';
import { readJson } from '../kit/s3.ts';

const INPUT = 'limits-input';
const RESULTS = 'limits-results';
const MiB = 1024 * 1024;
const silent: VendorLogger = { debug() {}, info() {}, warn() {}, error() {} };

let s3: S3rverFixture;
let deps: ListDeps;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [INPUT, RESULTS] });
  deps = { s3: s3.client, logger: silent, settings: { resultsBucket: RESULTS, inputBucket: INPUT } };
});

afterAll(async () => {
  await s3.close();
});

/** About `bytes` of lines that are not domains, each different (so nothing deduplicates). */
function junk(bytes: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `this is not a domain !! ${i} ~~ ${'x'.repeat(i % 30)}`;
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

async function upload(key: string, body: Buffer): Promise<void> {
  await s3.client.send(
    new PutObjectCommand({ Bucket: INPUT, Key: key, Body: body, ContentType: 'text/plain' }),
  );
}

/** Runs `work` while sampling the heap; returns its result and the peak growth in MiB. */
async function withPeakHeap<T>(work: () => Promise<T>): Promise<{ result: T; peakGrowthMiB: number }> {
  globalThis.gc?.();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    return { result, peakGrowthMiB: (peak - base) / MiB };
  } finally {
    clearInterval(timer);
  }
}

describe('domain-list limits', () => {
  it('refuses a 50 MB junk list before reading it, and still writes a summary.json that says why', async () => {
    // Prepare
    await upload('incoming/huge.txt', junk(50 * MiB));

    // Act
    const { result: prepared, peakGrowthMiB } = await withPeakHeap(() =>
      prepareDomainList(deps, { source: { type: 's3', bucket: INPUT, key: 'incoming/huge.txt' } }),
    );
    const { summaryKey } = await writeListSummary(deps, { ...prepared, results: [] });

    // Assess
    console.info(
      `PrepareDomainList on a 50 MB junk list: refused, peak heap growth ${peakGrowthMiB.toFixed(1)} MiB`,
    );
    expect(prepared.rejected?.reason).toMatch(
      /incoming\/huge\.txt is \d+ bytes, over the limit of 20971520 bytes/,
    );
    expect(prepared.counts).toEqual({ lines: 0, valid: 0, invalid: 0, duplicate: 0, ignored: 0 });
    const summary = await readJson<ListSummary>(s3.client, RESULTS, summaryKey);
    expect(summary.rejected?.reason).toBe(prepared.rejected?.reason);
    expect(summary.domains).toEqual([]);
    expect(peakGrowthMiB).toBeLessThan(64);
  });

  it('streams a 19 MB junk list, counts every line, keeps 1,000 samples, and stays far below the function memory', async () => {
    // Prepare
    const body = junk(19 * MiB);
    const lines = body.toString('utf8').split('\n').length - 1;
    await upload('incoming/junk.txt', body);

    // Act
    const { result: prepared, peakGrowthMiB } = await withPeakHeap(() =>
      prepareDomainList(deps, { source: { type: 's3', bucket: INPUT, key: 'incoming/junk.txt' } }),
    );
    const { summaryKey } = await writeListSummary(deps, { ...prepared, results: [] });

    // Assess
    console.info(
      `PrepareDomainList on a 19 MB junk list (${lines} lines): peak heap growth ${peakGrowthMiB.toFixed(1)} MiB`,
    );
    expect(prepared.rejected).toBeUndefined();
    expect(prepared.counts).toEqual({ lines, valid: 0, invalid: lines, duplicate: 0, ignored: 0 });
    const rejects = await readJson<{ invalid: { line: number; reason: string }[] }>(
      s3.client,
      RESULTS,
      prepared.rejectsKey,
    );
    expect(rejects.invalid).toHaveLength(1_000);
    expect(rejects.invalid[0]).toMatchObject({ line: 1 });
    expect(rejects.invalid[999]?.line).toBe(1_000);
    expect(rejects.invalid.every((entry) => entry.reason.length > 0)).toBe(true);
    const summary = await readJson<ListSummary>(s3.client, RESULTS, summaryKey);
    expect(summary.counts).toMatchObject({ lines, invalid: lines });
    expect(summary.sampled).toBe(true);
    expect(summary.invalid).toHaveLength(1_000);
    // The Lambda has 1 GiB; before this change the same kind of list took gigabytes of heap.
    expect(peakGrowthMiB).toBeLessThan(256);
  });

  it('refuses a list object that does not exist with a summary instead of failing the run', async () => {
    // Act
    const prepared = await prepareDomainList(deps, {
      source: { type: 's3', bucket: INPUT, key: 'incoming/gone.txt' },
    });
    const { summaryKey } = await writeListSummary(deps, { ...prepared, results: [] });

    // Assess
    expect(prepared.rejected?.reason).toContain('cannot be read (NoSuchKey)');
    expect((await readJson<ListSummary>(s3.client, RESULTS, summaryKey)).rejected?.reason).toContain(
      'NoSuchKey',
    );
  });

  it('keeps a near-256 KiB ad-hoc list out of the state: the prepared run and the summary output stay small', async () => {
    // Prepare: what a hand-started DomainListScan may carry, just under Step Functions' 256 KiB.
    const domains = Array.from({ length: 9_600 }, (_, i) => `host-${i}.example-${i % 97}.com`);
    const input = { source: { type: 'adhoc' as const, requestId: 'big-adhoc', domains } };
    const inputBytes = Buffer.byteLength(JSON.stringify(input));
    expect(inputBytes).toBeGreaterThan(250 * 1024);
    expect(inputBytes).toBeLessThan(256 * 1024);

    // Act: the two steps whose outputs become the state (PrepareDomainList) and the execution output.
    const prepared = await prepareDomainList(deps, input);
    const written = await writeListSummary(deps, { ...prepared, results: [] });

    // Assess
    expect(Buffer.byteLength(JSON.stringify(prepared))).toBeLessThan(2 * 1024);
    expect(prepared.source).toEqual({ type: 'adhoc', requestId: 'big-adhoc', inlineDomains: 9_600 });
    expect(Buffer.byteLength(JSON.stringify(written))).toBeLessThan(1024);
    const items = await readJson<{ domain: string }[]>(s3.client, RESULTS, prepared.itemsKey);
    expect(items).toHaveLength(9_600);
    const summary = await readJson<ListSummary>(s3.client, RESULTS, written.summaryKey);
    expect(summary.source).toEqual(prepared.source);
    expect(summary.domains).toHaveLength(9_600);
  });

  it('honours a configured limit', async () => {
    // Prepare
    await upload('incoming/small-limit.txt', Buffer.from('example.com\nexample.org\n'));
    const strict: ListDeps = { ...deps, settings: { ...deps.settings, maxListBytes: 10 } };

    // Act
    const prepared = await prepareDomainList(strict, {
      source: { type: 's3', bucket: INPUT, key: 'incoming/small-limit.txt' },
    });

    // Assess
    expect(prepared.rejected?.reason).toContain('is 24 bytes, over the limit of 10 bytes');
  });
});

/**
 * Huge or junk lists against the embedded S3: the prepare step checks the size before reading,
 * streams the parse, counts every line but keeps only samples, and the run always ends with a
 * summary.json that says what happened. Memory figures are printed for the closing note; the
 * assertions are on what the step read and held (test/kit/s3-reads.ts), never on a timing.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListSummary } from '#lambdas/domain-list/contracts';
import type { ListDeps } from '#lambdas/domain-list/deps';
import { DEFAULT_MAX_LIST_BYTES } from '#lambdas/domain-list/domain-list';
import { prepareDomainList } from '#lambdas/domain-list/prepare-domain-list';
import { writeListSummary } from '#lambdas/domain-list/write-list-summary';
import type { VendorLogger } from '#lambdas/vendor-api/transport/types';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { readJson } from '../kit/s3.ts';
import { heldRiseWhileReading, keepGetObjectBodies } from '../kit/s3-reads.ts';

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
function junk(bytes: number): { body: Buffer; lines: number } {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `this is not a domain !! ${i} ~~ ${'x'.repeat(i % 30)}`;
    lines.push(line);
    size += line.length + 1;
  }
  return { body: Buffer.from(`${lines.join('\n')}\n`), lines: lines.length };
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
  it('refuses a list one byte over the default 20 MiB limit without reading a byte of it, and still writes a summary.json that says why', async () => {
    // Prepare: the size is all the step may look at, so the content need not be varied (the
    // 50 MB of distinct junk lines this test used to upload took seconds to build).
    const size = DEFAULT_MAX_LIST_BYTES + 1;
    await upload('incoming/huge.txt', Buffer.alloc(size, 'this is not a domain\n'));
    const client = s3.createClient();
    const bodies = keepGetObjectBodies(client);

    // Act
    const { result: prepared, peakGrowthMiB } = await withPeakHeap(() =>
      prepareDomainList(
        { ...deps, s3: client },
        { source: { type: 's3', bucket: INPUT, key: 'incoming/huge.txt' } },
      ),
    );
    const { summaryKey } = await writeListSummary(deps, { ...prepared, results: [] });

    // Assess
    console.info(
      `PrepareDomainList on a ${size}-byte list: refused, peak heap growth ${peakGrowthMiB.toFixed(1)} MiB`,
    );
    // The default is what docs/configuration.md says (intake.maxListBytes, 20971520).
    expect(prepared.rejected?.reason).toContain(
      'incoming/huge.txt is 20971521 bytes, over the limit of 20971520 bytes',
    );
    expect(prepared.counts).toEqual({ lines: 0, valid: 0, invalid: 0, duplicate: 0, ignored: 0 });
    // Refused on the answer's Content-Length: the body was released without a read.
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatchObject({ readableDidRead: false, destroyed: true });
    const summary = await readJson<ListSummary>(s3.client, RESULTS, summaryKey);
    expect(summary.rejected?.reason).toBe(prepared.rejected?.reason);
    expect(summary.domains).toEqual([]);
    expect(peakGrowthMiB).toBeLessThan(64);
  });

  it('streams an 8 MiB junk list, counts every line, keeps 1,000 samples, and holds no more memory as it reads', async () => {
    // Prepare
    const { body, lines } = junk(8 * MiB);
    await upload('incoming/junk.txt', body);
    // Let the upload's buffers go before the first figure (they are released within milliseconds).
    await new Promise((resolve) => setTimeout(resolve, 50));
    const client = s3.createClient();
    const heldRise = heldRiseWhileReading(client, 2 * MiB);

    // Act
    const { result: prepared, peakGrowthMiB } = await withPeakHeap(() =>
      prepareDomainList(
        { ...deps, s3: client },
        { source: { type: 's3', bucket: INPUT, key: 'incoming/junk.txt' } },
      ),
    );
    const { summaryKey } = await writeListSummary(deps, { ...prepared, results: [] });

    // Assess
    console.info(
      `PrepareDomainList on an 8 MiB junk list (${lines} lines): held memory rose ${(heldRise() / MiB).toFixed(1)} MiB while reading, peak heap growth ${peakGrowthMiB.toFixed(1)} MiB`,
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
    // Sampled after a collection every 2 MiB read: streaming stays within about 1.5 MiB (measured);
    // a step that keeps the body, its lines or a record per line rises by about the 8 MiB read.
    expect(heldRise()).toBeLessThan(4 * MiB);
    // The Lambda has 1 GiB; before streaming, the same kind of list took gigabytes of heap.
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

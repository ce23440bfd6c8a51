/**
 * A scan listing of empty entries under its byte cap: reconciliation reads it one entry at a time,
 * counts every unusable entry and describes the first 100 only, and, in a process whose heap is
 * limited, reads 16 MiB of them (5.6 million entries; parsed whole, about 600 MB) within 256 MB.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reconcileScans } from '#lambdas/scan/reconcile-scans';
import { UNREADABLE_SAMPLE } from '#lambdas/vendor-api/scan/scan-listing';
import { freshBucket, readRecord, reconcileDeps, sim, useReconcileBed } from './reconcile-fixture.ts';

useReconcileBed();

const WORKER = resolve(import.meta.dirname, '../../bench/listing-worker.ts');

/** The listing worker in a process of its own, its heap limited; its exit code and last line. */
function readInLimitedHeap(mib: number, heapMb: number): Promise<{ code: number | null; line: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [`--max-old-space-size=${heapMb}`, '--import', 'tsx', WORKER, String(mib), 'streamed'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.resume();
    child.on('error', fail);
    child.on('close', (code) => done({ code, line: stdout.trim().split('\n').pop() ?? '' }));
  });
}

describe('a scan listing of empty entries under its byte cap', () => {
  it('is counted whole, with a bounded sample of unreadable entries in the record', async () => {
    const entries = 200_000;
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/scans',
      fault: {
        type: 'status',
        status: 200,
        body: `{"scans":[${'{},'.repeat(entries - 1)}{}]}`,
        contentType: 'application/json',
      },
    });
    const bucket = await freshBucket();
    const bed = reconcileDeps(bucket);

    const result = await reconcileScans(bed.deps);

    expect(result.counts).toMatchObject({ listed: entries, unreadable: entries, archived: 0 });
    const record = await readRecord(bed.s3, bucket, result.recordKey);
    expect(record.unreadable).toHaveLength(UNREADABLE_SAMPLE);
    expect(record.unreadable[0]).toEqual({ index: 0, reason: 'no uuid (uuid/scan_uuid/scanUuid/id)' });
  });

  it('is read in a process whose heap is limited to 256 MB, 16 MiB of it', async () => {
    const { code, line } = await readInLimitedHeap(16, 256);

    expect(code).toBe(0);
    expect(JSON.parse(line)).toMatchObject({ entries: 5_592_401, unreadable: 5_592_401, sample: 100 });
  }, 120_000);
});

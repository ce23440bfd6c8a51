/**
 * The vendor statistics job's dated history (`operations/vendor-stats/YYYY/MM/DD.json`) against the
 * embedded S3, whose conditional writes answer as S3 does: each day's first read is kept and never
 * replaced; a write conflict (S3's 409, a concurrent write that may yet fail) is tried again, and
 * only a 412 counts as the day's object kept.
 */
import { describe, expect, it } from 'vitest';
import { VENDOR_STATS_FOLDER } from '#lambdas/operations/registry';
import {
  recordVendorStatistics,
  VENDOR_STATS_LATEST_KEY,
  vendorStatsHistoryKey,
} from '#lambdas/operations/vendor-stats';
import { listKeys, readJson } from '../kit/s3.ts';
import { finishedAtVendor, freshBucket, s3, statsRun, useStatsBed } from './vendor-stats-fixture.ts';

useStatsBed();

/** Makes the client's next `count` PutObjects of the day's key fail as S3's 409 conflict does. */
function conflictOnDay(run: ReturnType<typeof statsRun>, count: number): { readonly attempts: number } {
  const seen = { attempts: 0 };
  run.deps.s3.middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: string }).Key ?? '';
      if (context.commandName === 'PutObjectCommand' && /\/\d{4}\/\d{2}\/\d{2}\.json$/.test(key)) {
        seen.attempts += 1;
        if (seen.attempts <= count) {
          const conflict = Object.assign(new Error('A conflicting operation occurred'), {
            name: 'ConditionalRequestConflict',
            $metadata: { httpStatusCode: 409 },
          });
          throw conflict;
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'conflictOnDay' },
  );
  return seen;
}

describe("the vendor statistics' dated history", () => {
  it("keeps each day's first read in operations/vendor-stats/YYYY/MM/DD.json and never replaces it", async () => {
    // Prepare
    const bucket = await freshBucket();
    await finishedAtVendor('day.example.com');

    // Act: two reads on one day, one the next day
    const morning = await recordVendorStatistics(statsRun(bucket, '2026-11-28T01:00:00.000Z').deps);
    await finishedAtVendor('noon.example.com');
    const noon = await recordVendorStatistics(statsRun(bucket, '2026-11-28T12:00:00.000Z').deps);
    const nextDay = await recordVendorStatistics(statsRun(bucket, '2026-11-29T01:00:00.000Z').deps);

    // Assess: the morning's snapshot stands; the latest read moved on
    expect(morning.history).toEqual({ key: 'operations/vendor-stats/2026/11/28.json', written: true });
    expect(noon.history).toEqual({ key: 'operations/vendor-stats/2026/11/28.json', written: false });
    expect(nextDay.history).toEqual({ key: 'operations/vendor-stats/2026/11/29.json', written: true });
    const day = await readJson(s3.client, bucket, 'operations/vendor-stats/2026/11/28.json');
    expect(day).toEqual({
      schemaVersion: 1,
      readAt: '2026-11-28T01:00:00.000Z',
      finished: 1,
      failed: 0,
      numbers: {
        total: 1,
        'by_status.queued': 0,
        'by_status.running': 0,
        'by_status.completed': 1,
        'by_status.failed': 0,
      },
      skipped: 0,
    });
    expect(noon.finishedIncrease).toBe(1);
    expect(await readJson(s3.client, bucket, VENDOR_STATS_LATEST_KEY)).toMatchObject({
      readAt: '2026-11-29T01:00:00.000Z',
    });
    expect(vendorStatsHistoryKey('2027-01-05T23:59:59.999Z')).toBe('operations/vendor-stats/2027/01/05.json');
  });

  it("tries the day's write again after a conflict, and fails the run after three, its growth already measured from", async () => {
    const bucket = await freshBucket();
    await finishedAtVendor('conflict.example.com');

    const once = statsRun(bucket, '2026-11-28T01:00:00.000Z');
    const oneConflict = conflictOnDay(once, 1);
    const written = await recordVendorStatistics(once.deps);

    const always = statsRun(bucket, '2026-11-29T01:00:00.000Z');
    const conflicts = conflictOnDay(always, 3);
    const failed = recordVendorStatistics(always.deps);

    expect(written.history).toEqual({ key: `${VENDOR_STATS_FOLDER}2026/11/28.json`, written: true });
    expect(oneConflict.attempts).toBe(2);
    await expect(failed).rejects.toMatchObject({ name: 'ConditionalRequestConflict' });
    expect(conflicts.attempts).toBe(3);
    // The previous read moved before the day's write: the next run measures from it, not again.
    expect(await readJson(s3.client, bucket, VENDOR_STATS_LATEST_KEY)).toMatchObject({
      readAt: '2026-11-29T01:00:00.000Z',
    });
    expect(await listKeys(s3.client, bucket, `${VENDOR_STATS_FOLDER}2026/11/29`)).toEqual([]);
  });
});

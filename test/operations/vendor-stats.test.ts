/**
 * The operations workflow's vendor statistics job (lambdas/operations/vendor-stats.ts) against the
 * vendor simulator over loopback HTTP, through the shared scan client, and the embedded S3: the
 * metrics it publishes, the previous read it measures growth from (its dated history is
 * vendor-stats-history.test.ts's), and what a hostile `GET /stats` answer can and cannot make it
 * store or say.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { VENDOR_STATS_FOLDER } from '#lambdas/operations/registry';
import { recordVendorStatistics, VENDOR_STATS_LATEST_KEY } from '#lambdas/operations/vendor-stats';
import { SCAN_METRIC } from '#lambdas/registry';
import { MAX_STATISTICS } from '#lambdas/vendor-api/scan/scan-listing';
import { listKeys, readJson, readObject } from '../kit/s3.ts';
import { scanClientFor } from '../scan/fixture.ts';
import {
  API_KEY,
  answerStats,
  finishedAtVendor,
  freshBucket,
  increases,
  s3,
  sim,
  statistics,
  statsRun,
  useStatsBed,
} from './vendor-stats-fixture.ts';

useStatsBed();

describe('the vendor statistics job', () => {
  it('publishes every numeric field, then the growth of the finished and failed counts from the second read on', async () => {
    // Prepare
    const bucket = await freshBucket();
    sim.scriptScan('fails.example.com', { outcome: 'fail', pollsToFinish: 1 });
    await finishedAtVendor('first.example.com');

    // Act: the first read has nothing to compare with
    const first = statsRun(bucket, '2026-11-27T06:00:00.000Z');
    const firstOutcome = await recordVendorStatistics(first.deps);
    await finishedAtVendor('second.example.com');
    await finishedAtVendor('fails.example.com');
    await scanClientFor(sim).startScan('pending.example.com');
    const second = statsRun(bucket, '2026-11-28T06:00:00.000Z');
    const outcome = await recordVendorStatistics(second.deps);

    // Assess: the metric names and dimensions the alarms and the dashboard read
    expect(statistics(first.metrics.recorded)).toEqual({
      total: 1,
      'by_status.queued': 0,
      'by_status.running': 0,
      'by_status.completed': 1,
      'by_status.failed': 0,
    });
    expect(first.metrics.recorded.every((m) => m.dimensions.workflow === 'scan')).toBe(true);
    expect(increases(first.metrics.recorded)).toEqual([]);
    expect(firstOutcome).toMatchObject({ finishedIncrease: null, failedIncrease: null, problem: null });
    expect(increases(second.metrics.recorded)).toEqual([
      [SCAN_METRIC.vendorFinishedIncrease, 1, { workflow: 'scan' }],
      [SCAN_METRIC.vendorFailedIncrease, 1, { workflow: 'scan' }],
    ]);
    expect(outcome).toMatchObject({
      finished: 2,
      failed: 1,
      finishedIncrease: 1,
      failedIncrease: 1,
      problem: null,
      history: { key: `${VENDOR_STATS_FOLDER}2026/11/28.json`, written: true },
    });
    expect(await readJson(second.deps.s3, bucket, VENDOR_STATS_LATEST_KEY)).toMatchObject({
      schemaVersion: 1,
      readAt: '2026-11-28T06:00:00.000Z',
      finished: 2,
      failed: 1,
    });
  });

  it('reads the counts at configured paths, and never publishes a fall as a negative growth', async () => {
    const bucket = await freshBucket();
    answerStats('{"totals":{"done":7,"broken":2},"label":"x"}');
    const fields = { finished: 'totals.done', failed: 'totals.broken' };
    const read = await recordVendorStatistics(statsRun(bucket, undefined, fields).deps);
    expect(read).toMatchObject({ finished: 7, failed: 2, numbers: { 'totals.done': 7, 'totals.broken': 2 } });

    // Scans deleted at the vendor: its counts fall
    answerStats('{"totals":{"done":5,"broken":3}}');
    const fell = statsRun(bucket, undefined, fields);
    await recordVendorStatistics(fell.deps);
    expect(increases(fell.metrics.recorded)).toEqual([
      [SCAN_METRIC.vendorFinishedIncrease, 0, { workflow: 'scan' }],
      [SCAN_METRIC.vendorFailedIncrease, 1, { workflow: 'scan' }],
    ]);
  });

  it('records a refused or unreadable /stats, publishes and stores nothing, and the next read measures from the last good one', async () => {
    const bucket = await freshBucket();
    await finishedAtVendor('stats.example.com');
    await recordVendorStatistics(statsRun(bucket).deps);
    const before = await listKeys(s3.client, bucket, VENDOR_STATS_FOLDER);

    sim.addFault({ api: 'scan', method: 'GET', path: '/stats', fault: { type: 'status', status: 503 } });
    const refused = statsRun(bucket, '2026-11-29T06:00:00.000Z');
    const outcome = await recordVendorStatistics(refused.deps);
    answerStats('[1, 2, 3]');
    const unreadable = await recordVendorStatistics(statsRun(bucket, '2026-11-29T07:00:00.000Z').deps);

    expect(outcome).toMatchObject({
      finished: null,
      history: null,
      problem: { name: 'VendorUnavailableError' },
    });
    expect(unreadable.problem).toEqual({
      name: 'VendorResponseError',
      message: expect.stringContaining('not an object'),
    });
    expect(refused.metrics.recorded).toEqual([]);
    expect(
      refused.logger.lines.some((line) => line.level === 'warn' && /could not be read/.test(line.message)),
    ).toBe(true);
    expect(await listKeys(s3.client, bucket, VENDOR_STATS_FOLDER)).toEqual(before);

    await finishedAtVendor('later.example.com');
    const next = statsRun(bucket, '2026-11-30T06:00:00.000Z');
    await recordVendorStatistics(next.deps);
    expect(increases(next.metrics.recorded)).toContainEqual([
      SCAN_METRIC.vendorFinishedIncrease,
      1,
      { workflow: 'scan' },
    ]);
  });

  it("publishes no increase on its first run after an upgrade: the scan reconciliation's old snapshot is not measured from", async () => {
    // The snapshot the reconciliation kept before this job existed, far behind the vendor's counts
    const bucket = await freshBucket();
    await s3.client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'scans/reconciliation/vendor-stats.json',
        Body: JSON.stringify({
          schemaVersion: 1,
          readAt: '2026-01-01T00:00:00.000Z',
          finished: 0,
          failed: 0,
        }),
      }),
    );
    await finishedAtVendor('upgrade.example.com');

    const run = statsRun(bucket);
    await recordVendorStatistics(run.deps);

    expect(increases(run.metrics.recorded)).toEqual([]);
    expect(await listKeys(s3.client, bucket, 'scans/')).toEqual(['scans/reconciliation/vendor-stats.json']);
  });

  it('refuses a /stats answer past the read bound by name, and stores nothing', async () => {
    const bucket = await freshBucket();
    answerStats(`{"total": 1, "pad": "${'x'.repeat(9 * 1024 * 1024)}"}`);
    const run = statsRun(bucket);
    const outcome = await recordVendorStatistics(run.deps);
    expect(outcome.problem?.name).toMatch(/^Vendor/);
    expect(run.metrics.recorded).toEqual([]);
    expect(await listKeys(s3.client, bucket, VENDOR_STATS_FOLDER)).toEqual([]);
  });
});

// --- Hostile answers -----------------------------------------------------------------------------

/** A number no answer has by chance: planted under credential-named fields only. */
const SECRET_NUMBER = 7_318_264_509;
const VENDOR_SHAPED_KEY = 'sk_live_9QxT4mZ2pL8vR1nB';
const ADDRESS = 'alice.person@example.org';
const SECRETS = [API_KEY, VENDOR_SHAPED_KEY, ADDRESS, String(SECRET_NUMBER)];

const fieldName = fc.oneof(
  fc.constantFrom('total', 'by_status', 'completed', 'failed', 'queued', 'count', 'data', 'a-b', 'x.y'),
  fc.constantFrom(API_KEY, VENDOR_SHAPED_KEY, ADDRESS, `prefix_${API_KEY}`),
  fc.string({ maxLength: 80 }),
);
const credentialName = fc.constantFrom(
  'token',
  'api_key',
  'password',
  'secret',
  'authorization',
  'x-api-key',
);
const leaf = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.constantFrom(API_KEY, `Bearer ${API_KEY}`, ADDRESS, VENDOR_SHAPED_KEY, null, true, '12', '1e999'),
  fc.string({ maxLength: 40 }),
);
const { tree } = fc.letrec<{ tree: unknown; node: Record<string, unknown> }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    tie('node'),
    fc.array(tie('tree'), { maxLength: 4 }),
  ),
  node: fc
    .tuple(
      fc.dictionary(fieldName, tie('tree'), { maxKeys: 12 }),
      fc.option(credentialName, { nil: undefined }),
    )
    .map(([node, credential]) =>
      credential === undefined ? node : { ...node, [credential]: SECRET_NUMBER },
    ),
}));
/** Many fields (past MAX_STATISTICS), deep nesting (past the walk's and past JSON's bound), or not JSON. */
const hostileBody = fc.oneof(
  tree.map((value) => JSON.stringify(value) ?? 'null'),
  fc
    .integer({ min: 0, max: 400 })
    .map((count) =>
      JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, i) => [`field_${i}`, i]))),
    ),
  fc
    .integer({ min: 1, max: 120 })
    .map((depth) => `${'{"n":'.repeat(depth)}{"${API_KEY}":1,"total":2}${'}'.repeat(depth)}`),
  fc.constantFrom(
    `{"total": 3, "${API_KEY}": 5}`,
    `not json ${API_KEY}`,
    `{"by_status": {"completed": 2}, "token": ${SECRET_NUMBER}}`,
  ),
);

describe('a hostile /stats answer', () => {
  test.prop([hostileBody], { numRuns: 40, seed: 4404 })(
    'makes the job store, log and publish nothing secret, and at most MAX_STATISTICS numbers',
    async (body) => {
      // Prepare: the key is in use (the client sends it), so redaction knows it by value
      const bucket = await freshBucket();
      answerStats(body);
      const run = statsRun(bucket);

      // Act
      const outcome = await recordVendorStatistics(run.deps);

      // Assess
      const stored = await Promise.all(
        (await listKeys(s3.client, bucket, '')).map(
          async (key) => `${key}\n${(await readObject(s3.client, bucket, key)).toString('utf8')}`,
        ),
      );
      const said = [
        ...stored,
        run.logger.text(),
        JSON.stringify(run.metrics.recorded),
        JSON.stringify(outcome),
      ].join('\n');
      for (const secret of SECRETS) expect(said).not.toContain(secret);
      const published = run.metrics.recorded.filter((m) => m.name === SCAN_METRIC.vendorStatistic);
      expect(published.length).toBeLessThanOrEqual(MAX_STATISTICS);
      expect(
        published.every(
          (m) => Number.isFinite(m.value) && /^[\w.-]{1,64}$/.test(m.dimensions.statistic ?? ''),
        ),
      ).toBe(true);
      expect(Object.keys(outcome.numbers).length).toBeLessThanOrEqual(MAX_STATISTICS);
      expect(stored.every((text) => text.length < 16 * 1024)).toBe(true);
    },
  );
});

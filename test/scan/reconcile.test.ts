/**
 * Scan reconciliation against the vendor simulator and s3rver on loopback. The orphan is made the
 * way production makes one: the synthesized ScanDomain definition runs with the real handlers, and
 * the simulator creates the scan but loses StartScan's answer, so the execution ends ScanRejected.
 */

import { describe, expect, it } from 'vitest';
import { SCAN_METRIC } from '#lambdas/registry';
import type { LinkedFailureRecord } from '#lambdas/scan/failure-links';
import { INDEX_CONCURRENCY, reconcileScans } from '#lambdas/scan/reconcile-scans';
import { parseReconcileSettings } from '#lambdas/scan/reconcile-settings';
import { MANIFEST_FILE, type ScanManifest } from '#lambdas/scan/write-scan-manifest';
import { createReconcileScansHandler } from '../../lambdas/scan/reconcile-scans.ts';
import { recordS3Commands } from '../../local/services/s3/embedded-s3.ts';
import { sha256Hex } from '../kit/digest.ts';
import { listKeys, readJson, readObject } from '../kit/s3.ts';
import { vendorOutputDigest } from './fixture.ts';
import {
  finishAtVendor,
  freshBucket,
  letVendorFinish,
  reconcileDeps,
  s3,
  scanClient,
  scanWithLostStartAnswer,
  sim,
  startAtVendor,
  useReconcileBed,
} from './reconcile-fixture.ts';

useReconcileBed();

describe('an orphan from a start whose answer was lost', () => {
  it('is archived with the workflow steps, linked to its ScanRejected record, and a second run stores nothing new', async () => {
    // Prepare: the execution ends ScanRejected, the vendor has the scan, nobody archived it
    const bucket = await freshBucket();
    const end = await scanWithLostStartAnswer(bucket, 'orphan.example.com');
    expect(end).toMatchObject({ status: 'failed', error: 'ScanRejected' });
    const [rejectedKey] = (await listKeys(s3.createClient(), bucket, 'scans/orphan.example.com/')).filter(
      (key) => key.includes('/rejected-'),
    );
    expect(rejectedKey).toMatch(/\/rejected-[0-9a-f]{16}\/failure\.json$/);
    await letVendorFinish();
    const listed = ((await scanClient().listScans()).raw as { scans: { uuid: string }[] }).scans;
    expect(listed).toHaveLength(1);
    const uuid = listed[0]?.uuid as string;

    // Act
    const first = reconcileDeps(bucket);
    const result = await reconcileScans(first.deps);

    // Assess: the outputs are byte-identical to the vendor's, under the uuid, with a reconciled manifest
    expect(result.counts).toMatchObject({
      listed: 1,
      archived: 1,
      alreadyArchived: 0,
      linkedFailures: 1,
      failed: 0,
    });
    const keys = await listKeys(first.s3, bucket, 'scans/orphan.example.com/');
    const manifestKey = keys.find((key) => key.endsWith(`/${uuid}/${MANIFEST_FILE}`)) as string;
    expect(manifestKey).toBeDefined();
    const manifest = await readJson<ScanManifest>(first.s3, bucket, manifestKey);
    expect(manifest).toMatchObject({
      origin: 'reconciled',
      domain: 'orphan.example.com',
      scanUuid: uuid,
      finalStatus: { state: 'succeeded' },
      reconciliation: { linkedFailureKeys: [rejectedKey] },
    });
    for (const output of ['report', 'logs', 'debug'] as const) {
      const entry = manifest.objects.find((object) => object.name === output);
      const vendor = await vendorOutputDigest(sim, output, uuid);
      expect(entry?.sha256).toBe(vendor.sha256);
      expect(sha256Hex(await readObject(first.s3, bucket, entry?.key as string))).toBe(vendor.sha256);
    }
    // ...and the failure record now names the scan, with everything it said before kept
    const failure = await readJson<LinkedFailureRecord>(first.s3, bucket, rejectedKey as string);
    expect(failure).toMatchObject({
      failure: 'ScanRejected',
      outcome: { domain: 'orphan.example.com', state: 'rejected' },
      reconciledScan: { scanUuid: uuid, manifestKey },
    });
    // ...counted as reconciled, not as a scan the workflow finished
    const names = first.metrics.recorded.map((metric) => metric.name);
    expect(names).toContain(SCAN_METRIC.scansReconciled);
    expect(names).not.toContain(SCAN_METRIC.scansSucceeded);
    // ...nothing deleted at the vendor (deleteAtVendorAfterManifest is off)
    expect(((await scanClient().listScans()).raw as { scans: unknown[] }).scans).toHaveLength(1);

    // Act: a second run
    const second = reconcileDeps(bucket);
    const writes = recordS3Commands(second.s3, { withKeys: true });
    const again = await reconcileScans(second.deps);

    // Assess: only its own record was written
    expect(again.counts).toMatchObject({ listed: 1, archived: 0, alreadyArchived: 1 });
    const written = writes.filter((entry) =>
      /^(PutObject|CreateMultipartUpload|CopyObject|DeleteObject)Command /.test(entry),
    );
    expect(written).toEqual([`PutObjectCommand ${again.recordKey}`]);
    expect(await listKeys(second.s3, bucket, 'scans/orphan.example.com/')).toEqual(keys);
    // ...and neither run read the vendor's statistics: the operations workflow's job does
    // (test/operations/vendor-stats.test.ts), once for the organisation.
    expect(sim.requestCount('GET /stats')).toBe(0);
    expect([...first.metrics.recorded, ...second.metrics.recorded].map((m) => m.name)).not.toContain(
      SCAN_METRIC.vendorStatistic,
    );
  });
});

describe('an archive of many domains', () => {
  /** The deps of one run, with every ListObjectsV2 counted and the most in flight at once kept. */
  function countingListings(bucket: string, settings: Parameters<typeof reconcileDeps>[1] = {}) {
    const run = reconcileDeps(bucket, settings);
    const listings = { total: 0, inFlight: 0, most: 0 };
    run.s3.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'ListObjectsV2Command') return next(args);
        listings.total += 1;
        listings.inFlight += 1;
        listings.most = Math.max(listings.most, listings.inFlight);
        try {
          return await next(args);
        } finally {
          listings.inFlight -= 1;
        }
      },
      { step: 'initialize', name: 'countListings' },
    );
    return { ...run, listings };
  }

  async function scansAtVendor(count: number): Promise<void> {
    const uuids = await Promise.all(
      Array.from({ length: count }, (_, i) => startAtVendor(`many-${i}.example.com`)),
    );
    await Promise.all(uuids.map((uuid) => finishAtVendor(uuid)));
  }

  it('indexes one listing per domain, many at a time and never more than INDEX_CONCURRENCY', async () => {
    // Prepare: 40 domains with one finished scan each, none archived; no archive may start.
    const bucket = await freshBucket();
    await scansAtVendor(40);
    const { deps, listings } = countingListings(bucket, { maxArchivesPerRun: 1 });

    // Act
    const result = await reconcileScans(deps);

    // Assess: every domain listed once, in parallel, within the bound.
    expect(listings.total).toBeGreaterThanOrEqual(40);
    expect(listings.most).toBeGreaterThan(1);
    expect(listings.most).toBeLessThanOrEqual(INDEX_CONCURRENCY);
    expect(result.counts).toMatchObject({ archived: 1, deferred: 39 });
  });

  it('lists nothing past the time reserve: domains it could not index are deferred, not listed late', async () => {
    const bucket = await freshBucket();
    await scansAtVendor(5);
    const { deps, listings } = countingListings(bucket);

    const result = await reconcileScans(deps, { timeLeftMs: () => 4 * 60_000 });

    expect(listings.total).toBe(0);
    expect(result.counts).toMatchObject({ archived: 0, deferred: 5 });
  });
});

describe('the deployed handler', () => {
  it('starts no archive with less than 5 minutes of the invocation left, and defers the rest to the next run', async () => {
    const bucket = await freshBucket();
    await finishAtVendor(await startAtVendor('late.example.com'));
    const handler = createReconcileScansHandler(reconcileDeps(bucket).deps);

    const late = await handler({}, { getRemainingTimeInMillis: () => 4 * 60_000 });
    const inTime = await handler({}, { getRemainingTimeInMillis: () => 14 * 60_000 });

    expect(late.counts).toMatchObject({ archived: 0, deferred: 1 });
    expect(inTime.counts).toMatchObject({ archived: 1, deferred: 0 });
  });

  it('refuses SCAN_RECONCILIATION settings it cannot use, naming the variable and the field', () => {
    const variable = 'SCAN_RECONCILIATION';
    expect(() => parseReconcileSettings(undefined, variable)).toThrow(
      'Configuration SCAN_RECONCILIATION: is required but not set',
    );
    expect(() => parseReconcileSettings('{', variable)).toThrow(
      'Configuration SCAN_RECONCILIATION: is not valid JSON',
    );
    expect(() => parseReconcileSettings('{"minAgeSeconds": 60, "bogus": 1}', variable)).toThrow(
      'Configuration SCAN_RECONCILIATION.bogus: is not a known setting',
    );
    expect(() => parseReconcileSettings('{"minAgeSeconds": 691200, "horizonDays": 7}', variable)).toThrow(
      /SCAN_RECONCILIATION\.minAgeSeconds: must be below the horizon of 7 days/,
    );
    expect(() =>
      parseReconcileSettings('{"minAgeSeconds": 60, "listFields": {"uuid": "a b"}}', variable),
    ).toThrow(/SCAN_RECONCILIATION\.listFields\.uuid: must be a dot path/);
  });
});

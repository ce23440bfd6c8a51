/**
 * Scan reconciliation against the vendor simulator and s3rver on loopback. The orphan is made the
 * way production makes one: the synthesized ScanDomain definition runs with the real handlers, and
 * the simulator creates the scan but loses StartScan's answer, so the execution ends ScanRejected.
 */

import { describe, expect, it } from 'vitest';
import type { LinkedFailureRecord } from '#lambdas/scan/failure-links';
import { reconcileScans } from '#lambdas/scan/reconcile-scans';
import { MANIFEST_FILE, type ScanManifest } from '#lambdas/scan/write-scan-manifest';
import { createMemoryLogger } from '../kit/loggers.ts';
import { listKeys, readJson } from '../kit/s3.ts';
import { executeScan, executionEnd } from '../local/harness.ts';
import {
  blindListing,
  finishAtVendor,
  freshBucket,
  letVendorFinish,
  machine,
  readRecord,
  reconcileDeps,
  restartSimulator,
  s3,
  scanClient,
  sim,
  startAtVendor,
  useReconcileBed,
} from './reconcile-fixture.ts';

useReconcileBed();

describe('what reconciliation leaves alone, and what it records', () => {
  it('records a /scans body of an unexpected shape instead of failing, by position and without values', async () => {
    // Prepare: one real orphan, then a list that is no list at all
    const bucket = await freshBucket();
    const uuid = await startAtVendor('console.example.com');
    await finishAtVendor(uuid);
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/scans',
      fault: { type: 'status', status: 200, body: '{"weird":{"shape":true}}' },
    });

    // Act
    const first = reconcileDeps(bucket);
    const shapeless = await reconcileScans(first.deps);

    // Assess: recorded, not fatal, nothing archived
    expect(shapeless.counts).toMatchObject({ listed: 0, unreadable: 1, archived: 0 });
    const record = await readRecord(first.s3, bucket, shapeless.recordKey);
    expect(record.unreadable).toEqual([
      { index: null, reason: 'no list of scans (scans/items/data/results) in an object' },
    ]);
    expect(first.logger.lines).toContainEqual(
      expect.objectContaining({ level: 'warn', message: 'Scan reconciliation finished' }),
    );

    // Act: entries of which only one is usable
    const body = JSON.stringify({
      scans: [
        { id: 'secret-looking-not-a-uuid', domain: 'a.example.com' },
        42,
        { uuid },
        { uuid, domain: 'not a domain!' },
        { uuid, domain: 'console.example.com', status: 'completed' },
      ],
    });
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/scans',
      fault: { type: 'status', status: 200, body },
    });
    const mixed = await reconcileScans(reconcileDeps(bucket).deps);

    // Assess
    expect(mixed.counts).toMatchObject({ listed: 5, unreadable: 4, archived: 1 });
    const mixedRecord = await readRecord(first.s3, bucket, mixed.recordKey);
    expect(mixedRecord.unreadable).toEqual([
      { index: 0, reason: 'the uuid (uuid/scan_uuid/scanUuid/id) is not a UUID' },
      { index: 1, reason: 'a number, not a scan record' },
      { index: 2, reason: 'no domain (domain/target/host/hostname)' },
      { index: 3, reason: 'the domain (domain/target/host/hostname) is not a domain name' },
    ]);
    expect(JSON.stringify(mixedRecord)).not.toContain('secret-looking');
  });

  it('finds uuid, domain, status and creation time at configured paths', async () => {
    const bucket = await freshBucket();
    const uuid = await startAtVendor('paths.example.com');
    await finishAtVendor(uuid);
    const body = JSON.stringify({
      data: {
        items: [
          {
            id: uuid,
            target: { host: 'paths.example.com' },
            state: 'done',
            created: Math.floor(Date.now() / 1000) - 60,
          },
        ],
      },
    });
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/scans',
      fault: { type: 'status', status: 200, body },
    });

    const result = await reconcileScans(
      reconcileDeps(bucket, {
        listFields: {
          list: 'data.items',
          uuid: 'id',
          domain: 'target.host',
          status: 'state',
          createdAt: 'created',
        },
      }).deps,
    );

    expect(result.counts).toMatchObject({ listed: 1, unreadable: 0, archived: 1 });
    expect(await listKeys(s3.createClient(), bucket, `scans/paths.example.com/`)).toContainEqual(
      expect.stringMatching(new RegExp(`/${uuid}/manifest\\.json$`)),
    );
  });

  it('leaves alone a scan beyond the horizon, one too recent, one still running, and one the vendor failed', async () => {
    // Prepare: the vendor's clock, moved by hand
    let vendorNow = new Date('2026-11-01T00:00:00.000Z');
    await restartSimulator({ pollsToFinish: 2, now: () => vendorNow });
    sim.scriptScan('failing.example.com', { outcome: 'fail', pollsToFinish: 1 });
    sim.scriptScan('running.example.com', { outcome: 'never-finish' });
    const old = await startAtVendor('old.example.com'); // 2026-11-01: beyond a 7-day horizon
    await finishAtVendor(old);
    vendorNow = new Date('2026-11-20T00:00:00.000Z');
    const failing = await startAtVendor('failing.example.com');
    await finishAtVendor(failing);
    const running = await startAtVendor('running.example.com');
    vendorNow = new Date('2026-11-20T23:30:00.000Z');
    const recent = await startAtVendor('recent.example.com'); // 30 minutes before the run
    await finishAtVendor(recent);
    const bucket = await freshBucket();
    const bed = reconcileDeps(bucket, { minAgeSeconds: 3600, horizonDays: 7 });
    const deps = { ...bed.deps, clock: () => new Date('2026-11-21T00:00:00.000Z') };

    const statusReads = sim.requestCount('GET /status/{uuid}');

    // Act
    const result = await reconcileScans(deps);

    // Assess: only the running scan was asked for its status; the list already said the rest
    expect(sim.requestCount('GET /status/{uuid}') - statusReads).toBe(1);
    expect(result.counts).toMatchObject({
      listed: 4,
      beyondHorizon: 1,
      tooRecent: 1,
      unfinished: 1,
      vendorFailed: 1,
      archived: 0,
    });
    const record = await readRecord(bed.s3, bucket, result.recordKey);
    expect(record.vendorFailed).toEqual([failing]);
    expect(record.horizonStart).toBe('2026-11-14T00:00:00.000Z');
    expect(
      (await listKeys(bed.s3, bucket, 'scans/')).filter((key) => !key.startsWith('scans/reconciliation/')),
    ).toEqual([]);
    void running;
  });

  it('archives into the folder of a workflow that timed out, and links that failure record', async () => {
    // Prepare: the workflow gives up after its deadline; the vendor finishes later
    sim.scriptScan('slow.example.com', { outcome: 'succeed', pollsToFinish: 30 });
    const bucket = await freshBucket();
    const run = await executeScan(
      {
        ...machine,
        s3: s3.createClient(),
        resultsBucket: bucket,
        scanClient: scanClient(),
        poll: { minWaitSeconds: 1, maxWaitSeconds: 1, growthFactor: 1, deadlineSeconds: 3 },
        logger: createMemoryLogger(),
        clock: () => new Date(),
      },
      'slow.example.com',
    );
    expect(executionEnd(run.events)).toMatchObject({ status: 'failed', error: 'ScanTimedOut' });
    const [failureKey] = (await listKeys(s3.createClient(), bucket, 'scans/slow.example.com/')).filter((k) =>
      k.endsWith('/failure.json'),
    );
    const uuid = (failureKey as string).split('/')[5] as string;
    await finishAtVendor(uuid);

    // Act
    const bed = reconcileDeps(bucket);
    const result = await reconcileScans(bed.deps);

    // Assess: same folder, the timeout linked both ways, the manifest accounts for failure.json
    expect(result.counts).toMatchObject({ archived: 1, linkedFailures: 1 });
    const folder = (failureKey as string).replace(/failure\.json$/, '');
    const manifest = await readJson<ScanManifest>(bed.s3, bucket, `${folder}${MANIFEST_FILE}`);
    expect(manifest).toMatchObject({
      origin: 'reconciled',
      reconciliation: { linkedFailureKeys: [failureKey] },
      otherObjects: [{ key: failureKey }],
    });
    const failure = await readJson<LinkedFailureRecord>(bed.s3, bucket, failureKey as string);
    expect(failure).toMatchObject({ failure: 'ScanTimedOut', reconciledScan: { scanUuid: uuid } });
  });

  it('links only a rejection within the match window, and never one that proves nothing started', async () => {
    // Prepare: the lost answer is recorded 2 hours after the vendor created the scan (a skewed or
    // stuck start), and a refused start (401: nothing created) is recorded at the same moment
    const bucket = await freshBucket();
    const twoHoursLater = () => new Date(Date.now() + 2 * 3600_000);
    const setup = {
      ...machine,
      s3: s3.createClient(),
      resultsBucket: bucket,
      poll: { minWaitSeconds: 1, maxWaitSeconds: 2, growthFactor: 1.5, deadlineSeconds: 600 },
      logger: createMemoryLogger(),
    };
    // Refused on every attempt, the state machine's VendorAuthError retries included.
    const refuse = sim.addFault({
      api: 'scan',
      method: 'POST',
      path: '/scan',
      times: 50,
      fault: { type: 'status', status: 401 },
    });
    const refused = await executeScan(
      { ...setup, scanClient: scanClient(), clock: () => new Date() },
      'window.example.com',
    );
    expect(executionEnd(refused.events)).toMatchObject({ status: 'failed', error: 'ScanRejected' });
    refuse();
    sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'lose-response' } });
    const blind = blindListing();
    await executeScan({ ...setup, scanClient: scanClient(), clock: twoHoursLater }, 'window.example.com');
    blind();
    await letVendorFinish();

    // Act
    const bed = reconcileDeps(bucket, { matchWindowSeconds: 1800 });
    const result = await reconcileScans(bed.deps);

    // Assess: archived, linked to nothing; neither record was rewritten
    expect(result.counts).toMatchObject({ archived: 1, linkedFailures: 0 });
    const rejected = (await listKeys(bed.s3, bucket, 'scans/')).filter((key) => key.includes('/rejected-'));
    expect(rejected).toHaveLength(2);
    for (const key of rejected) {
      expect(await readJson<LinkedFailureRecord>(bed.s3, bucket, key)).not.toHaveProperty('reconciledScan');
    }
  });

  it('deletes the orphan at the vendor once archived when deleteAtVendorAfterManifest is on', async () => {
    const bucket = await freshBucket();
    const uuid = await startAtVendor('delete.example.com');
    await finishAtVendor(uuid);

    const bed = reconcileDeps(bucket, { deleteAtVendor: true });
    const result = await reconcileScans(bed.deps);

    expect(result.counts).toMatchObject({ archived: 1 });
    const record = await readRecord(bed.s3, bucket, result.recordKey);
    expect(record.archived[0]).toMatchObject({ scanUuid: uuid, deletedAtVendor: true });
    expect(sim.requestCount('DELETE /scan/{uuid}')).toBe(1);
    expect(((await scanClient().listScans()).raw as { scans: unknown[] }).scans).toEqual([]);
  });

  it('archives at most maxArchivesPerRun orphans per run; the next run takes the rest', async () => {
    const bucket = await freshBucket();
    for (const domain of ['one.example.com', 'two.example.com', 'three.example.com']) {
      await finishAtVendor(await startAtVendor(domain));
    }

    const first = await reconcileScans(reconcileDeps(bucket, { maxArchivesPerRun: 2 }).deps);
    const second = await reconcileScans(reconcileDeps(bucket, { maxArchivesPerRun: 2 }).deps);
    const third = await reconcileScans(reconcileDeps(bucket, { maxArchivesPerRun: 2 }).deps);

    expect(
      [first.counts, second.counts, third.counts].map((c) => [c.archived, c.deferred, c.alreadyArchived]),
    ).toEqual([
      [2, 1, 0],
      [1, 0, 2],
      [0, 0, 3],
    ]);
  });
});

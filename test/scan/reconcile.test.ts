/**
 * Scan reconciliation against the vendor simulator and s3rver on loopback. The orphan is made the
 * way production makes one: the synthesized ScanDomain definition runs with the real handlers, and
 * the simulator creates the scan but loses StartScan's answer, so the execution ends ScanRejected.
 */
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMetricsRecorder, METRIC } from '#lambdas/platform/metrics';
import type { ScanClient } from '#lambdas/platform/vendor-api/index';
import { createScanDeps } from '#lambdas/scan/deps';
import type { LinkedFailureRecord } from '#lambdas/scan/failure-links';
import { MANIFEST_FILE, type ScanManifest } from '#lambdas/scan/manifest';
import {
  reconcileScans,
  type ScanReconcileDeps,
  type ScanReconciliationRecord,
} from '#lambdas/scan/reconcile';
import {
  parseReconcileSettings,
  type ReconcileSettingsInput,
  reconcileSettingsSchema,
} from '#lambdas/scan/reconcile-settings';
import { createScanSettings } from '#lambdas/scan/settings';
import { VENDOR_STATS_KEY } from '#lambdas/scan/vendor-stats';
import type { VendorSimulator } from '#local/simulator/types';
import { createReconcileScansHandler } from '../../lambdas/scan/handlers/reconcile-scans.ts';
import { recordS3Commands, type S3rverFixture, startS3rver } from '../../local/embedded-s3.ts';
import { createMemoryLogger } from '../helpers/memory-logger.ts';
import {
  executeScan,
  executionEnd,
  listKeys,
  readJson,
  readObject,
  sha256Hex,
  synthesizedScanMachine,
} from '../local/harness.ts';
import {
  closeTestClients,
  RESULTS_BUCKET,
  scanClientFor,
  startSimulator,
  vendorOutputDigest,
} from './fixture.ts';

let s3: S3rverFixture;
let sim: VendorSimulator;
let machine: Awaited<ReturnType<typeof synthesizedScanMachine>>;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
  machine = await synthesizedScanMachine();
});

beforeEach(async () => {
  // A fresh vendor per test: its list is what reconciliation works from.
  sim = await startSimulator({ pollsToFinish: 2 });
});

afterEach(async () => {
  await closeTestClients();
  await sim.close();
});

afterAll(async () => {
  await s3.close();
});

/** A client of this test's vendor; closed after each test. */
const scanClient = (): ScanClient => scanClientFor(sim);

/** A bucket of its own per test, so listings and records never mix. */
async function freshBucket(): Promise<string> {
  const bucket = `reconcile-${randomUUID().slice(0, 8)}`;
  await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

function reconcileDeps(bucket: string, settings: Partial<ReconcileSettingsInput> = {}) {
  const client = scanClient();
  const logger = createMemoryLogger();
  const metrics = createMetricsRecorder();
  const s3Client = s3.createClient();
  const deps: ScanReconcileDeps = {
    ...createScanDeps({
      s3: s3Client,
      scanClient: client,
      logger,
      metrics,
      settings: createScanSettings({ resultsBucket: bucket }),
    }),
    inventory: client,
    // The orphans here are seconds old: no workflow is left to race with.
    reconcile: reconcileSettingsSchema.parse({ minAgeSeconds: 0, ...settings }),
  };
  return { deps, logger, metrics, s3: s3Client };
}

/**
 * Runs a domain through the synthesized ScanDomain with StartScan's answer lost at the vendor and
 * the listing unreadable while StartScan settles it: ScanRejected, with an orphan at the vendor.
 */
async function scanWithLostStartAnswer(bucket: string, domain: string) {
  sim.addFault({ api: 'scan', method: 'POST', path: '/scan', fault: { type: 'lose-response' } });
  const blind = blindListing();
  const run = await executeScan(
    {
      ...machine,
      s3: s3.createClient(),
      resultsBucket: bucket,
      scanClient: scanClient(),
      poll: { minWaitSeconds: 1, maxWaitSeconds: 2, growthFactor: 1.5, deadlineSeconds: 600 },
      logger: createMemoryLogger(),
      clock: () => new Date(),
    },
    domain,
  );
  blind();
  return executionEnd(run.events);
}

/** GET /scans answers 503 until the returned function is called: a start cannot be settled. */
function blindListing(): () => void {
  return sim.addFault({
    api: 'scan',
    method: 'GET',
    path: '/scans',
    times: Number.POSITIVE_INFINITY,
    fault: { type: 'status', status: 503 },
  });
}

/** Polls the scan at the vendor until it is finished: the vendor ran it while nobody watched. */
async function letVendorFinish(): Promise<void> {
  const client = scanClient();
  const { raw } = await client.listScans();
  for (const scan of (raw as { scans: { uuid: string }[] }).scans) {
    for (let i = 0; i < 5; i++) {
      const status = await client.getStatus(scan.uuid);
      if (status.state === 'succeeded' || status.state === 'failed') break;
    }
  }
}

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
    expect(names).toContain(METRIC.scansReconciled);
    expect(names).not.toContain(METRIC.scansSucceeded);
    // ...nothing deleted at the vendor (deleteAtVendorAfterManifest is off)
    expect(((await scanClient().listScans()).raw as { scans: unknown[] }).scans).toHaveLength(1);

    // Act: a second run
    const second = reconcileDeps(bucket);
    const writes = recordS3Commands(second.s3, { withKeys: true });
    const again = await reconcileScans(second.deps);

    // Assess: only its own record and the statistics snapshot were written
    expect(again.counts).toMatchObject({ listed: 1, archived: 0, alreadyArchived: 1 });
    const written = writes.filter((entry) =>
      /^(PutObject|CreateMultipartUpload|CopyObject|DeleteObject)Command /.test(entry),
    );
    expect(written.sort()).toEqual(
      [`PutObjectCommand ${again.recordKey}`, `PutObjectCommand ${VENDOR_STATS_KEY}`].sort(),
    );
    expect(await listKeys(second.s3, bucket, 'scans/orphan.example.com/')).toEqual(keys);
  });
});

/** Scans started straight at the vendor (as in its console), at the simulator's clock. */
async function startAtVendor(domain: string): Promise<string> {
  return (await scanClient().startScan(domain)).uuid;
}

async function finishAtVendor(uuid: string, polls = 30): Promise<void> {
  const client = scanClient();
  for (let i = 0; i < polls; i++) {
    const status = await client.getStatus(uuid);
    if (status.state === 'succeeded' || status.state === 'failed') return;
  }
}

async function readRecord(s3Client: ReturnType<S3rverFixture['createClient']>, bucket: string, key: string) {
  return readJson<ScanReconciliationRecord>(s3Client, bucket, key);
}

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
    await sim.close();
    sim = await startSimulator({ pollsToFinish: 2, now: () => vendorNow });
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

describe('the vendor statistics', () => {
  it('publishes every numeric field, then the growth of the finished and failed counts from the second read on', async () => {
    // Prepare
    const bucket = await freshBucket();
    sim.scriptScan('fails.example.com', { outcome: 'fail', pollsToFinish: 1 });
    await finishAtVendor(await startAtVendor('first.example.com'));

    // Act: the first read has nothing to compare with
    const first = reconcileDeps(bucket);
    await reconcileScans(first.deps);
    await finishAtVendor(await startAtVendor('second.example.com'));
    await finishAtVendor(await startAtVendor('fails.example.com'));
    await startAtVendor('pending.example.com');
    const second = reconcileDeps(bucket);
    const result = await reconcileScans(second.deps);

    // Assess
    const statistic = (recorded: typeof first.metrics.recorded) =>
      Object.fromEntries(
        recorded
          .filter((m) => m.name === METRIC.vendorStatistic)
          .map((m) => [m.dimensions.statistic, m.value]),
      );
    expect(statistic(first.metrics.recorded)).toEqual({
      total: 1,
      'by_status.queued': 0,
      'by_status.running': 0,
      'by_status.completed': 1,
      'by_status.failed': 0,
    });
    const increases = (recorded: typeof first.metrics.recorded) =>
      recorded.filter(
        (m) => m.name === METRIC.vendorFinishedIncrease || m.name === METRIC.vendorFailedIncrease,
      );
    expect(increases(first.metrics.recorded)).toEqual([]);
    expect(increases(second.metrics.recorded).map((m) => [m.name, m.value])).toEqual([
      [METRIC.vendorFinishedIncrease, 1],
      [METRIC.vendorFailedIncrease, 1],
    ]);
    const record = await readRecord(second.s3, bucket, result.recordKey);
    expect(record.vendorStatistics).toMatchObject({
      finished: 2,
      failed: 1,
      finishedIncrease: 1,
      failedIncrease: 1,
      problem: null,
    });
  });

  it('reads the counts at configured paths, and a refused /stats is recorded while the scans are still reconciled', async () => {
    const bucket = await freshBucket();
    await finishAtVendor(await startAtVendor('stats.example.com'));
    sim.addFault({
      api: 'scan',
      method: 'GET',
      path: '/stats',
      fault: { type: 'status', status: 200, body: '{"totals":{"done":7,"broken":2},"label":"x"}' },
    });
    const configured = reconcileDeps(bucket, {
      statsFields: { finished: 'totals.done', failed: 'totals.broken' },
    });
    const read = await reconcileScans(configured.deps);
    expect((await readRecord(configured.s3, bucket, read.recordKey)).vendorStatistics).toMatchObject({
      finished: 7,
      failed: 2,
      numbers: { 'totals.done': 7, 'totals.broken': 2 },
    });

    sim.addFault({ api: 'scan', method: 'GET', path: '/stats', fault: { type: 'status', status: 503 } });
    await finishAtVendor(await startAtVendor('after.example.com'));
    const refused = reconcileDeps(bucket);
    const result = await reconcileScans(refused.deps);
    expect(result.counts).toMatchObject({ archived: 1 });
    const record = await readRecord(refused.s3, bucket, result.recordKey);
    expect(record.vendorStatistics).toMatchObject({
      finished: null,
      problem: { name: 'VendorUnavailableError' },
    });
    expect(refused.metrics.recorded.some((m) => m.name === METRIC.vendorStatistic)).toBe(false);
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

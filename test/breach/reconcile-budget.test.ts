/**
 * Breach reconciliation's budget: a run archives as many reports as its time allows, a few at a
 * time, at most so many, and starts none without time enough left; a backlog drains over
 * successive runs with every report archived once, and a report that always fails, or that ends
 * the invocation mid-archive, never holds up the ones listed after it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BreachDeps } from '#lambdas/breach/deps';
import { reportFolder } from '#lambdas/breach/identity';
import {
  ARCHIVE_CONCURRENCY,
  ATTEMPT_FILE,
  type ReconcileResult,
  reconcileReports,
} from '#lambdas/breach/reconcile-breach-reports';
import { ARCHIVE_TIME_RESERVE_MS } from '#lambdas/platform/runs/reconcile-each';
import { listKeys, readJson } from '../kit/s3.ts';
import { type BreachTestBed, REPORT_NAMING_KEY, RESULTS_BUCKET, startBreachBed } from './fixture.ts';

let bed: BreachTestBed;
beforeEach(async () => {
  bed = await startBreachBed();
});
afterEach(async () => {
  await bed.close();
});

const GOOD = Array.from({ length: 10 }, (_, index) => `r${String(index + 1).padStart(2, '0')}_good`);

type Download = BreachDeps['breachClient']['download'];

/** The bed's deps with each report download going through `around` (which calls the real one). */
function depsAroundDownload(
  around: (...args: [...Parameters<Download>, Download]) => ReturnType<Download>,
): BreachDeps {
  const download: Download = (name, options) => bed.client.download(name, options);
  return {
    ...bed.deps,
    breachClient: {
      recon: (request) => bed.client.recon(request),
      listReports: () => bed.client.listReports(),
      download: (name, options) => around(name, options, download),
    },
  };
}

async function manifests(): Promise<string[]> {
  return (await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/reports/')).filter((key) =>
    key.endsWith('/manifest.json'),
  );
}

describe('breach reconciliation budget', () => {
  it('drains a backlog over successive runs, past a report that fails every time', async () => {
    // Prepare: the first report listed is never a valid ZIP
    bed.sim.createReport('r00_bad');
    for (const name of GOOD) bed.sim.createReport(name);
    bed.sim.addFault({
      api: 'storage',
      path: '/reports/r00_bad',
      times: 1000,
      fault: { type: 'status', status: 200, bodyBase64: Buffer.from('junk').toString('base64') },
    });
    const settings = { maxArchivesPerRun: 3 };

    // Act: one run a "day" until every good report is archived
    const runs: ReconcileResult[] = [];
    while ((await manifests()).length < GOOD.length && runs.length < 8) {
      runs.push(await reconcileReports(bed.deps, { settings }));
    }

    // Assess: three archives started per run, the bad one retried only after the fresh ones
    expect(runs.map((run) => run.counts.archived + run.counts.failed)).toEqual([3, 3, 3, 3]);
    expect(runs.map((run) => run.counts.archived)).toEqual([2, 3, 3, 2]);
    expect(runs.map((run) => run.counts.failed)).toEqual([1, 0, 0, 1]);
    const second = await readJson<{ deferred: string[] }>(
      bed.s3.client,
      RESULTS_BUCKET,
      runs[1]?.recordKey ?? '',
    );
    expect(second.deferred.at(-1)).toBe(reportFolder('r00_bad', REPORT_NAMING_KEY));
    // An archived report keeps no marker; the bad one does, for the next run's ordering.
    const keys = await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/reports/');
    expect(keys.filter((key) => key.endsWith(ATTEMPT_FILE))).toEqual([
      `${reportFolder('r00_bad', REPORT_NAMING_KEY)}${ATTEMPT_FILE}`,
    ]);
  });

  it('tries a report that ended an invocation mid-archive after every report never tried', async () => {
    // Prepare: downloading the first report outlives the invocation (Lambda ends the run there)
    bed.sim.createReport('r00_slow');
    for (const name of GOOD.slice(0, 4)) bed.sim.createReport(name);
    const deps = depsAroundDownload(async (name, options, download) => {
      if (name === 'r00_slow') throw new Error('Task timed out after 900.00 seconds');
      return download(name, options);
    });
    // The archives started beside it (three of the budget) finish; no new one starts once it fails.
    await expect(reconcileReports(deps, { settings: { maxArchivesPerRun: 3 } })).rejects.toThrow(/timed out/);
    expect(await manifests()).toHaveLength(2);

    // Act
    const next = await reconcileReports(deps, { settings: { maxArchivesPerRun: 2 } });

    // Assess: the next run archives the reports never tried, and leaves the one that was for last
    expect(next.counts).toEqual({ alreadyArchived: 2, archived: 2, deferred: 1, failed: 0, unreadable: 0 });
    const record = await readJson<{ deferred: string[] }>(bed.s3.client, RESULTS_BUCKET, next.recordKey);
    expect(record.deferred).toEqual([reportFolder('r00_slow', REPORT_NAMING_KEY)]);
  });

  it('starts nothing with less time left than the reserve, and records every report as left', async () => {
    // Prepare: an invocation already inside its time reserve
    for (const name of GOOD.slice(0, 5)) bed.sim.createReport(name);

    // Act
    const result = await reconcileReports(bed.deps, { timeLeftMs: () => ARCHIVE_TIME_RESERVE_MS - 1 });

    // Assess: no download, and the record names each report the next run takes
    expect(result.counts).toMatchObject({ archived: 0, deferred: 5, failed: 0 });
    expect(bed.sim.requestCount('GET /download/{report_name}')).toBe(0);
    const record = await readJson<{ deferred: string[] }>(bed.s3.client, RESULTS_BUCKET, result.recordKey);
    expect(record.deferred).toEqual(GOOD.slice(0, 5).map((name) => reportFolder(name, REPORT_NAMING_KEY)));
  });

  it('stops starting archives once the time left falls under the reserve', async () => {
    // Prepare: each download that finishes costs the invocation three of its seven minutes
    for (const name of GOOD) bed.sim.createReport(name);
    let leftMs = 7 * 60_000;
    const deps = depsAroundDownload(async (name, options, download) => {
      const downloaded = await download(name, options);
      leftMs -= 3 * 60_000;
      return downloaded;
    });

    // Act
    const result = await reconcileReports(deps, { timeLeftMs: () => leftMs });

    // Assess: the first four start together with 7 minutes left; once one has finished, 4 minutes
    // are left (under the 5-minute reserve), so no fifth starts and the rest are left for later
    expect(result.counts).toMatchObject({
      archived: ARCHIVE_CONCURRENCY,
      deferred: GOOD.length - ARCHIVE_CONCURRENCY,
    });
    expect(await manifests()).toHaveLength(ARCHIVE_CONCURRENCY);
  });

  it('archives a few reports at a time, never more', async () => {
    // Prepare: every download is held a moment, so the ones started together overlap
    for (const name of GOOD) bed.sim.createReport(name);
    let inFlight = 0;
    let mostInFlight = 0;
    const deps = depsAroundDownload(async (name, options, download) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        await new Promise((done) => setTimeout(done, 20));
        return await download(name, options);
      } finally {
        inFlight -= 1;
      }
    });

    // Act
    const result = await reconcileReports(deps);

    // Assess
    expect(result.counts).toMatchObject({ archived: GOOD.length, deferred: 0 });
    expect(mostInFlight).toBe(ARCHIVE_CONCURRENCY);
  });

  it('drains a backlog over successive runs, each report archived exactly once', async () => {
    // Prepare: a backlog of 23 reports, none archived, and runs of at most 5 archives
    const names = Array.from({ length: 23 }, (_, index) => `b${String(index).padStart(2, '0')}_backlog`);
    for (const name of names) bed.sim.createReport(name);
    const downloads = new Map<string, number>();
    const deps = depsAroundDownload(async (name, options, download) => {
      downloads.set(name, (downloads.get(name) ?? 0) + 1);
      return download(name, options);
    });

    // Act: one run a "day" until a run finds nothing left
    const runs: ReconcileResult[] = [];
    do {
      runs.push(await reconcileReports(deps, { settings: { maxArchivesPerRun: 5 } }));
    } while ((runs.at(-1)?.counts.deferred ?? 0) > 0 && runs.length < 10);

    // Assess: five runs, each downloading and archiving its reports once, none twice
    expect(runs.map((run) => run.counts.archived)).toEqual([5, 5, 5, 5, 3]);
    expect(runs.map((run) => run.counts.deferred)).toEqual([18, 13, 8, 3, 0]);
    expect([...downloads.values()].every((count) => count === 1)).toBe(true);
    expect(downloads.size).toBe(names.length);
    const archivedFolders = (
      await Promise.all(
        runs.map(async (run) => {
          const record = await readJson<{ archived: string[] }>(bed.s3.client, RESULTS_BUCKET, run.recordKey);
          return record.archived;
        }),
      )
    ).flat();
    expect(archivedFolders.sort()).toEqual(names.map((name) => reportFolder(name, REPORT_NAMING_KEY)).sort());
    expect(await manifests()).toHaveLength(names.length);
  });
});

/**
 * Breach reconciliation's budget: a run archives at most so many reports and starts none without
 * time enough left; a backlog drains over successive runs, and a report that always fails, or that
 * ends the invocation mid-archive, never holds up the ones listed after it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BreachDeps } from '#lambdas/breach/deps';
import { reportFolder } from '#lambdas/breach/identity';
import {
  ATTEMPT_FILE,
  type ReconcileResult,
  reconcileReports,
} from '#lambdas/breach/reconcile-breach-reports';
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
    const deps: BreachDeps = {
      ...bed.deps,
      breachClient: {
        recon: (request) => bed.client.recon(request),
        listReports: () => bed.client.listReports(),
        download: async (name, options) => {
          if (name === 'r00_slow') throw new Error('Task timed out after 900.00 seconds');
          return bed.client.download(name, options);
        },
      },
    };
    const settings = { maxArchivesPerRun: 3 };
    await expect(reconcileReports(deps, { settings })).rejects.toThrow(/timed out/);

    // Act
    const next = await reconcileReports(deps, { settings });

    // Assess: the next run archives the reports after it, and leaves it for last
    expect(next.counts).toEqual({ alreadyArchived: 0, archived: 3, deferred: 2, failed: 0, unreadable: 0 });
    const record = await readJson<{ deferred: string[] }>(bed.s3.client, RESULTS_BUCKET, next.recordKey);
    expect(record.deferred).toEqual([
      reportFolder('r04_good', REPORT_NAMING_KEY),
      reportFolder('r00_slow', REPORT_NAMING_KEY),
    ]);
  });

  it('starts no archive with less time left than an archive may need', async () => {
    // Prepare: each archive takes a simulated two minutes of the invocation's seven
    for (const name of GOOD.slice(0, 5)) bed.sim.createReport(name);
    let leftMs = 7 * 60_000;
    const deps: BreachDeps = {
      ...bed.deps,
      breachClient: {
        recon: (request) => bed.client.recon(request),
        listReports: () => bed.client.listReports(),
        download: async (name, options) => {
          leftMs -= 2 * 60_000;
          return bed.client.download(name, options);
        },
      },
    };

    // Act
    const result = await reconcileReports(deps, {
      settings: { maxArchivesPerRun: 25 },
      timeLeftMs: () => leftMs,
    });

    // Assess: 7 min → 5 min left after the first, 3 min after the second: under the 5-minute reserve
    expect(result.counts).toMatchObject({ archived: 2, deferred: 3 });
  });
});

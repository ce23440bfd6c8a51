/**
 * The synthesized BreachReport definition, executed locally with every Task bound to its real
 * handler, against the simulator and s3rver: every branch, and reconciliation of reports the
 * workflow never archived (watchlist runs: watchlist-runs.test.ts).
 */

import { describe, expect, it } from 'vitest';
import { reportFolder } from '#lambdas/breach/identity';
import { reconcileReports } from '#lambdas/breach/reconcile-breach-reports';
import { runBreachReport } from '#local/runner/breach-run';
import { listKeys, readJson } from '../kit/s3.ts';
import {
  bed,
  everythingStored,
  REPORT_NAMING_KEY,
  RESULTS_BUCKET,
  runOptions,
  useBreachRun,
} from './fixture.ts';

const INPUT_BUCKET = 'breach-input';
useBreachRun({ buckets: [INPUT_BUCKET] });

describe('BreachReport, synthesized and run locally', () => {
  it('archives a verified report: Recon -> ArchiveReport -> WriteBreachManifest', async () => {
    const run = await runBreachReport(runOptions(), {
      name: 'Jane Doe',
      emails: ['jane@example.com'],
      requestId: 'r1',
    });

    expect(run.outcome).toBe('archived');
    if (run.outcome !== 'archived') return;
    const manifest = await readJson(bed.s3.client, RESULTS_BUCKET, run.result.manifestKey);
    expect(manifest).toMatchObject({
      outcome: 'archived',
      recon: { status: 'success' },
      archive: { entryCount: 3 },
    });
    expect(manifest.objects).toEqual([`${run.outputPrefix}recon.json`]);
    expect(run.executionName).toMatch(/^breach-[0-9a-f]{48}$/);
  });

  it('succeeds with only recon.json when there is nothing to report', async () => {
    const run = await runBreachReport(runOptions(), {
      name: 'Clean',
      emails: ['clean@example.org'],
      requestId: 'r1',
    });

    expect(run.outcome).toBe('no_results');
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/people/')).toEqual([
      `${run.outputPrefix}recon.json`,
    ]);
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/reports/')).toEqual([]);
  });

  it('records a recon the vendor refused as ReconFailed in failure.json', async () => {
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'status', status: 400 } });

    const run = await runBreachReport(runOptions(), {
      name: 'Jane Doe',
      emails: ['jane@example.com'],
      requestId: 'r1',
    });

    expect(run).toMatchObject({ outcome: 'failed', error: 'ReconFailed' });
    const failure = await readJson(bed.s3.client, RESULTS_BUCKET, `${run.outputPrefix}failure.json`);
    expect(failure).toMatchObject({
      failure: 'ReconFailed',
      error: { name: 'VendorHttpError' },
      requestId: 'r1',
    });
  });

  it('records a ZIP that fails verification as ArchiveFailed, with nothing at the final key', async () => {
    bed.sim.addFault({
      api: 'storage',
      path: '/reports/',
      times: 10,
      fault: { type: 'status', status: 200, bodyBase64: Buffer.from('not a zip').toString('base64') },
    });

    const run = await runBreachReport(runOptions(), {
      name: 'Jane Doe',
      emails: ['jane@example.com'],
      requestId: 'r1',
    });

    expect(run).toMatchObject({ outcome: 'failed', error: 'ArchiveFailed' });
    expect(await readJson(bed.s3.client, RESULTS_BUCKET, `${run.outputPrefix}failure.json`)).toMatchObject({
      error: { name: 'ArchiveVerificationError' },
    });
    expect(
      (await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/reports/')).filter((key) =>
        key.endsWith('.zip'),
      ),
    ).toEqual([]);
  });

  it('never repeats a recon on a duplicate start: the second run is answered from recon.json', async () => {
    const request = { name: 'Jane Doe', emails: ['jane@example.com'], requestId: 'same' };
    const first = await runBreachReport(runOptions(), request);

    const second = await runBreachReport(runOptions(), request);

    expect(second.executionName).toBe(first.executionName);
    expect(second.outcome).toBe('archived');
    expect(bed.sim.requestCount('POST /recon')).toBe(1);
    expect(bed.sim.storageRequests).toHaveLength(1);
  });

  it('keeps every address out of keys, records, logs, metrics and execution names', async () => {
    const addresses = ['jane.private@example.com', 'clean.private@example.org'];
    const jane = await runBreachReport(runOptions(), {
      name: 'Jane Private',
      emails: [addresses[0] as string],
      requestId: 'p1',
    });
    const clean = await runBreachReport(runOptions(), {
      name: 'Clean Private',
      emails: [addresses[1] as string],
      requestId: 'p2',
    });

    const everything = [await everythingStored(bed), JSON.stringify(jane), JSON.stringify(clean)]
      .join('\n')
      .toLowerCase();

    for (const address of addresses) expect(everything).not.toContain(address);
    expect(everything).not.toContain('jane private');
  });
});

describe('breach reconciliation', () => {
  it('archives every report the vendor lists that is not archived yet; a second run uploads nothing', async () => {
    // Three reports at the vendor; the workflow archived only the first.
    const archived = await runBreachReport(runOptions(), {
      name: 'Jane Doe',
      emails: ['jane@example.com'],
      requestId: 'r1',
    });
    expect(archived.outcome).toBe('archived');
    bed.sim.createReport('lost-answer_1', { name: 'Lost Answer', emails: ['lost@example.com'] });
    bed.sim.createReport('never-archived_2', { name: 'Never Archived', emails: ['never@example.com'] });

    const first = await reconcileReports({ ...bed.deps, clock: () => new Date('2026-11-23T01:00:00Z') });

    expect(first.counts).toEqual({ alreadyArchived: 1, archived: 2, deferred: 0, failed: 0, unreadable: 0 });
    for (const name of ['lost-answer_1', 'never-archived_2']) {
      expect(
        await readJson(
          bed.s3.client,
          RESULTS_BUCKET,
          `${reportFolder(name, REPORT_NAMING_KEY)}manifest.json`,
        ),
      ).toMatchObject({
        origin: 'reconciled',
        reportName: name,
      });
    }
    const downloads = bed.sim.storageRequests.length;
    const keysBefore = await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/reports/');

    const second = await reconcileReports({ ...bed.deps, clock: () => new Date('2026-11-23T02:00:00Z') });

    expect(second.counts).toEqual({ alreadyArchived: 3, archived: 0, deferred: 0, failed: 0, unreadable: 0 });
    expect(bed.sim.storageRequests.length).toBe(downloads);
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, 'breach/reports/')).toEqual(keysBefore);
  });

  it('archives the report of a recon whose answer was lost', async () => {
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'lose-response' } });
    const run = await runBreachReport(runOptions(), {
      name: 'Jane Doe',
      emails: ['jane@example.com'],
      requestId: 'r1',
    });
    expect(run).toMatchObject({ outcome: 'failed', error: 'ReconFailed' });

    const result = await reconcileReports(bed.deps);

    expect(result.counts.archived).toBe(1);
    expect(bed.sim.requestCount('POST /recon')).toBe(1);
  });

  it('records a list it cannot read, and entries without a name, instead of failing', async () => {
    bed.sim.addFault({
      api: 'breach',
      path: '/view_breaches',
      fault: {
        type: 'status',
        status: 200,
        body: '{"data":{"items":[{"id":7},"named_report",{"report_name":""}]}}',
      },
    });
    bed.sim.createReport('named_report');

    const result = await reconcileReports(bed.deps);
    const record = await readJson(bed.s3.client, RESULTS_BUCKET, result.recordKey);

    expect(result.counts).toEqual({ alreadyArchived: 0, archived: 1, deferred: 0, failed: 0, unreadable: 2 });
    expect(record.unreadable).toEqual([
      { index: 0, reason: 'an object without a report name (name/report_name/output)' },
      { index: 2, reason: 'an object without a report name (name/report_name/output)' },
    ]);
  });

  it('records a report it cannot archive and goes on with the rest', async () => {
    bed.sim.createReport('a_first');
    bed.sim.createReport('b_second');
    bed.sim.addFault({
      api: 'storage',
      path: '/reports/a_first',
      times: 10,
      fault: { type: 'status', status: 200, bodyBase64: Buffer.from('junk').toString('base64') },
    });

    const result = await reconcileReports(bed.deps);

    expect(result.counts).toMatchObject({ archived: 1, failed: 1 });
    const record = await readJson<{ failed: { folder: string; error: { name: string } }[] }>(
      bed.s3.client,
      RESULTS_BUCKET,
      result.recordKey,
    );
    expect(record.failed).toEqual([
      {
        folder: reportFolder('a_first', REPORT_NAMING_KEY),
        error: expect.objectContaining({ name: 'ArchiveVerificationError' }),
      },
    ]);
  });
});

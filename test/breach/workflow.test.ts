/**
 * The synthesized BreachReport definition, executed locally with every Task bound to its real
 * handler, against the simulator and s3rver: every branch, watchlist runs with junk rows, and
 * reconciliation of reports the workflow never archived.
 */

import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reportFolder } from '#lambdas/breach/identity';
import { reconcileReports } from '#lambdas/breach/reconcile';
import type { RunFinishedDetail } from '#lambdas/platform/run-events';
import { prepareWatchlist, writeWatchlistSummary } from '#lambdas/watchlist/watchlist-run';
import { type LocalBreachOptions, runBreachReport, runWatchlist } from '#local/breach-run';
import { type AslDefinition, breachReportStateMachine } from '#local/definitions';
import { cachedTemplate } from '#local/synth-cache';
import { DEFAULT_PIPELINE_CONFIG } from '../../lib/config/index.ts';
import {
  type BreachTestBed,
  everythingStored,
  IDENTITY_KEY,
  keysUnder,
  RESULTS_BUCKET,
  readJson,
  startBreachBed,
} from './fixture.ts';

const INPUT_BUCKET = 'breach-input';
let definition: AslDefinition;
let bed: BreachTestBed;

beforeAll(async () => {
  definition = breachReportStateMachine(await cachedTemplate(DEFAULT_PIPELINE_CONFIG)).definition;
}, 120_000);
beforeEach(async () => {
  bed = await startBreachBed({ buckets: [INPUT_BUCKET] });
});
afterEach(async () => {
  await bed.close();
});

function options(overrides: Partial<LocalBreachOptions> = {}): LocalBreachOptions {
  return {
    s3: bed.s3.client,
    resultsBucket: RESULTS_BUCKET,
    definition,
    breachClient: bed.client,
    maxEmails: 50,
    identityKey: IDENTITY_KEY,
    logger: bed.logger,
    metrics: bed.metrics,
    retryIntervalMs: 1,
    ...overrides,
  };
}

describe('BreachReport, synthesized and run locally', () => {
  it('archives a verified report: Recon -> ArchiveReport -> WriteBreachManifest', async () => {
    const run = await runBreachReport(options(), {
      name: 'Jane Doe',
      emails: ['jane@example.com'],
      requestId: 'r1',
    });

    expect(run.outcome).toBe('archived');
    if (run.outcome !== 'archived') return;
    const manifest = await readJson(bed.s3.client, run.result.manifestKey);
    expect(manifest).toMatchObject({
      outcome: 'archived',
      recon: { status: 'success' },
      archive: { entryCount: 3 },
    });
    expect(manifest.objects).toEqual([`${run.outputPrefix}recon.json`]);
    expect(run.executionName).toMatch(/^breach-[0-9a-f]{48}$/);
  });

  it('succeeds with only recon.json when there is nothing to report', async () => {
    const run = await runBreachReport(options(), {
      name: 'Clean',
      emails: ['clean@example.org'],
      requestId: 'r1',
    });

    expect(run.outcome).toBe('no_results');
    expect(await keysUnder(bed.s3.client, 'breach/people/')).toEqual([`${run.outputPrefix}recon.json`]);
    expect(await keysUnder(bed.s3.client, 'breach/reports/')).toEqual([]);
  });

  it('records a recon the vendor refused as ReconFailed in failure.json', async () => {
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'status', status: 400 } });

    const run = await runBreachReport(options(), {
      name: 'Jane Doe',
      emails: ['jane@example.com'],
      requestId: 'r1',
    });

    expect(run).toMatchObject({ outcome: 'failed', error: 'ReconFailed' });
    const failure = await readJson(bed.s3.client, `${run.outputPrefix}failure.json`);
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

    const run = await runBreachReport(options(), {
      name: 'Jane Doe',
      emails: ['jane@example.com'],
      requestId: 'r1',
    });

    expect(run).toMatchObject({ outcome: 'failed', error: 'ArchiveFailed' });
    expect(await readJson(bed.s3.client, `${run.outputPrefix}failure.json`)).toMatchObject({
      error: { name: 'ArchiveVerificationError' },
    });
    expect((await keysUnder(bed.s3.client, 'breach/reports/')).filter((key) => key.endsWith('.zip'))).toEqual(
      [],
    );
  });

  it('never repeats a recon on a duplicate start: the second run is answered from recon.json', async () => {
    const request = { name: 'Jane Doe', emails: ['jane@example.com'], requestId: 'same' };
    const first = await runBreachReport(options(), request);

    const second = await runBreachReport(options(), request);

    expect(second.executionName).toBe(first.executionName);
    expect(second.outcome).toBe('archived');
    expect(bed.sim.requestCount('POST /recon')).toBe(1);
    expect(bed.sim.storageRequests).toHaveLength(1);
  });

  it('keeps every address out of keys, records, logs, metrics and execution names', async () => {
    const addresses = ['jane.private@example.com', 'clean.private@example.org'];
    const jane = await runBreachReport(options(), {
      name: 'Jane Private',
      emails: [addresses[0] as string],
      requestId: 'p1',
    });
    const clean = await runBreachReport(options(), {
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

describe('watchlist runs', () => {
  const CSV = [
    'name,email',
    '# the VIP list',
    'Jane Doe,jane@example.com,j.doe@example.net',
    '',
    '"Doe, John",john@example.com',
    'Clean Person,clean@example.org',
    'Bad Row,not-an-address',
    '"Broken quote,x@example.com',
    'JANE DOE,j.doe@example.net;JANE@example.com',
    ',nobody@example.com',
    `Too Many,${Array.from({ length: 51 }, (_, i) => `p${i}@example.com`).join(',')}`,
  ].join('\n');

  it('accounts for every row: archived, no results, invalid and duplicate, junk never stopping the rest', async () => {
    const run = await runWatchlist(
      { ...options(), inputBucket: INPUT_BUCKET, watchlistPrefix: 'watchlists/', concurrency: 2 },
      { name: 'vip.csv', bytes: Buffer.from(CSV) },
    );

    expect(run.counts).toEqual({
      rows: 8,
      archived: 2,
      no_results: 1,
      failed: 0,
      invalid: 4,
      duplicate: 1,
      ignoredLines: 2,
    });
    const summary = await readJson<{ rows: { row: number; status: string; reason?: string }[] }>(
      bed.s3.client,
      run.summaryKey,
    );
    expect(summary.rows.map((row) => [row.row, row.status])).toEqual([
      [3, 'archived'],
      [5, 'archived'],
      [6, 'no_results'],
      [7, 'invalid'],
      [8, 'invalid'],
      [9, 'duplicate'],
      [10, 'invalid'],
      [11, 'invalid'],
    ]);
    expect(summary.rows.find((row) => row.row === 7)?.reason).toBe("emails[0]: has no '@'");
    expect(summary.rows.find((row) => row.row === 9)?.reason).toBe('the same person as row 3');
    expect(summary.rows.find((row) => row.row === 11)?.reason).toMatch(/51 distinct addresses; at most 50/);
    expect(JSON.stringify(summary)).not.toMatch(/[a-z0-9.]@example/i);
  });

  it('reads a JSON watchlist and records a failed person without stopping the others', async () => {
    const people = [
      { name: 'Jane Doe', emails: ['jane@example.com'] },
      { name: 'John Roe', emails: ['john@example.com'] },
      { name: 42 },
    ];
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'status', status: 400 } });

    const run = await runWatchlist(
      { ...options(), inputBucket: INPUT_BUCKET, watchlistPrefix: 'watchlists/', concurrency: 1 },
      { name: 'people.json', bytes: Buffer.from(JSON.stringify({ people })) },
    );

    expect(run.counts).toMatchObject({ rows: 3, archived: 1, failed: 1, invalid: 1 });
    const summary = await readJson<{ rows: { row: number; status: string; error?: { name: string } }[] }>(
      bed.s3.client,
      run.summaryKey,
    );
    expect(summary.rows[0]).toMatchObject({ row: 1, status: 'failed', error: { name: 'ReconFailed' } });
  });
});

describe('a scheduled watchlist run', () => {
  it('reads the watchlist a schedule names, and each fire is its own run', async () => {
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    await bed.s3.client.send(
      new PutObjectCommand({
        Bucket: INPUT_BUCKET,
        Key: 'lists/vips.csv',
        Body: 'Jane,jane@example.com\nJohn,john@example.com\n',
      }),
    );
    const deps = {
      s3: bed.s3.client,
      logger: bed.logger,
      clock: () => new Date(),
      settings: { resultsBucket: RESULTS_BUCKET, maxEmails: 50 },
      identityKey: async () => IDENTITY_KEY,
    };
    const fire = (scheduledTime: string) => ({
      source: {
        type: 'schedule',
        scheduleName: 'weekly-vips',
        scheduledTime,
        bucket: INPUT_BUCKET,
        key: 'lists/vips.csv',
      },
    });

    const monday = await prepareWatchlist(deps, fire('2026-11-23T06:00:00Z'));
    const again = await prepareWatchlist(deps, fire('2026-11-23T06:00:00Z'));
    const nextMonday = await prepareWatchlist(deps, fire('2026-11-30T06:00:00Z'));

    expect(monday.counts).toMatchObject({ rows: 2, valid: 2 });
    expect(monday.resultsPrefix).toMatch(/^breach\/watchlists\/schedules\/weekly-vips\/[0-9a-f]{20}\/$/);
    expect(again.runId).toBe(monday.runId);
    expect(nextMonday.runId).not.toBe(monday.runId);
  });
});

describe('a redriven watchlist run', () => {
  it('records the real outcome of a child that already ran, not ExecutionAlreadyExists', async () => {
    const run = await runWatchlist(
      { ...options(), inputBucket: INPUT_BUCKET, watchlistPrefix: 'watchlists/', concurrency: 1 },
      { name: 'two.csv', bytes: Buffer.from('Jane,jane@example.com\nClean,clean@example.org\n') },
    );
    const items = await readJson<{ executionName: string }[]>(bed.s3.client, run.prepared.itemsKey);
    const [jane, clean] = items.map((item) => item.executionName) as [string, string];
    // What Step Functions holds: Jane's child succeeded earlier, Clean's is still running.
    const executions = new Map<string, { status: string; output?: string }>([
      [jane, { status: 'SUCCEEDED', output: JSON.stringify({ manifestKey: 'breach/people/jane/m.json' }) }],
      [clean, { status: 'RUNNING' }],
    ]);
    const lookups: string[] = [];
    const deps = {
      s3: bed.s3.client,
      logger: bed.logger,
      clock: () => new Date(),
      settings: { resultsBucket: RESULTS_BUCKET, maxEmails: 50 },
      identityKey: async () => IDENTITY_KEY,
      executions: {
        async describe(name: string) {
          lookups.push(name);
          const found = executions.get(name);
          if (!found) throw new Error(`ExecutionDoesNotExist: ${name}`);
          return found.status === 'SUCCEEDED'
            ? { status: 'SUCCEEDED' as const, output: found.output }
            : { status: found.status };
        },
      },
    };
    const exists = {
      name: 'StepFunctions.ExecutionAlreadyExistsException',
      message: 'Execution Already Exists',
    };

    const events: RunFinishedDetail[] = [];
    const written = await writeWatchlistSummary(
      { ...deps, events: { runFinished: async (d) => void events.push(d) } },
      {
        ...run.prepared,
        results: [jane, clean].map((executionName) => ({
          executionName,
          status: 'failed' as const,
          error: exists,
        })),
      },
    );

    expect(lookups.sort()).toEqual([jane, clean].sort());
    const summary = await readJson<{
      rows: { row: number; status: string; manifestKey?: string; error?: { name: string } }[];
    }>(bed.s3.client, written.summaryKey);
    expect(summary.rows[0]).toMatchObject({
      row: 1,
      status: 'archived',
      manifestKey: 'breach/people/jane/m.json',
    });
    expect(summary.rows[1]).toMatchObject({
      row: 2,
      status: 'failed',
      error: { name: 'ReportStillRunning' },
    });
    // Told who ran and where the summary is: counts only, no person.
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'watchlist',
        runId: run.prepared.runId,
        summary: `s3://${RESULTS_BUCKET}/${written.summaryKey}`,
        counts: expect.objectContaining({ archived: 1, failed: 1 }),
      }),
    ]);
    expect(JSON.stringify(events)).not.toMatch(/@|jane|doe/i);
  });
});

describe('a watchlist over the size limit', () => {
  it('is refused before it is read, with a summary that says why', async () => {
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    await bed.s3.client.send(
      new PutObjectCommand({
        Bucket: INPUT_BUCKET,
        Key: 'watchlists/big.csv',
        Body: 'Jane,jane@example.com\n'.repeat(100),
      }),
    );
    const deps = {
      s3: bed.s3.client,
      logger: bed.logger,
      clock: () => new Date(),
      settings: { resultsBucket: RESULTS_BUCKET, maxEmails: 50, maxWatchlistBytes: 1024 },
      identityKey: async () => IDENTITY_KEY,
    };

    const prepared = await prepareWatchlist(deps, {
      source: { type: 's3', bucket: INPUT_BUCKET, key: 'watchlists/big.csv' },
    });
    const written = await writeWatchlistSummary(deps, { ...prepared, results: [] });

    expect(prepared.counts).toMatchObject({ rows: 0, valid: 0 });
    expect(written.refused).toBe('Invalid watchlist: is 2200 bytes; at most 1024 are read');
    expect(await keysUnder(bed.s3.client, prepared.resultsPrefix)).not.toContainEqual(
      expect.stringContaining('/requests/'),
    );
  });
});

describe('breach reconciliation', () => {
  it('archives every report the vendor lists that is not archived yet; a second run uploads nothing', async () => {
    // Three reports at the vendor; the workflow archived only the first.
    const archived = await runBreachReport(options(), {
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
      expect(await readJson(bed.s3.client, `${reportFolder(name)}manifest.json`)).toMatchObject({
        origin: 'reconciled',
        reportName: name,
      });
    }
    const downloads = bed.sim.storageRequests.length;
    const keysBefore = await keysUnder(bed.s3.client, 'breach/reports/');

    const second = await reconcileReports({ ...bed.deps, clock: () => new Date('2026-11-23T02:00:00Z') });

    expect(second.counts).toEqual({ alreadyArchived: 3, archived: 0, deferred: 0, failed: 0, unreadable: 0 });
    expect(bed.sim.storageRequests.length).toBe(downloads);
    expect(await keysUnder(bed.s3.client, 'breach/reports/')).toEqual(keysBefore);
  });

  it('archives the report of a recon whose answer was lost', async () => {
    bed.sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'lose-response' } });
    const run = await runBreachReport(options(), {
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
    const record = await readJson(bed.s3.client, result.recordKey);

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
      result.recordKey,
    );
    expect(record.failed).toEqual([
      {
        folder: reportFolder('a_first'),
        error: expect.objectContaining({ name: 'ArchiveVerificationError' }),
      },
    ]);
  });
});

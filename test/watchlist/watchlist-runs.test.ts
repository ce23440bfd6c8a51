/**
 * Watchlist runs of the synthesized definitions, executed locally with every Task bound to its real
 * handler, against the simulator and s3rver: junk rows, JSON lists, schedules, redrives and the
 * size limit.
 */

import { describe, expect, it } from 'vitest';
import type { RunFinishedDetail } from '#lambdas/platform/runs/run-events';
import { prepareWatchlist } from '#lambdas/watchlist/prepare-watchlist';
import { writeWatchlistSummary } from '#lambdas/watchlist/write-watchlist-summary';
import { runWatchlist } from '#local/runner/breach-run';
import { bed, IDENTITY_KEY, RESULTS_BUCKET, runOptions, useBreachRun } from '../breach/fixture.ts';
import { listKeys, readJson } from '../kit/s3.ts';

const INPUT_BUCKET = 'breach-input';
useBreachRun({ buckets: [INPUT_BUCKET] });

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
      { ...runOptions(), inputBucket: INPUT_BUCKET, watchlistPrefix: 'watchlists/', concurrency: 2 },
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
      RESULTS_BUCKET,
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
      { ...runOptions(), inputBucket: INPUT_BUCKET, watchlistPrefix: 'watchlists/', concurrency: 1 },
      { name: 'people.json', bytes: Buffer.from(JSON.stringify({ people })) },
    );

    expect(run.counts).toMatchObject({ rows: 3, archived: 1, failed: 1, invalid: 1 });
    const summary = await readJson<{ rows: { row: number; status: string; error?: { name: string } }[] }>(
      bed.s3.client,
      RESULTS_BUCKET,
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
      { ...runOptions(), inputBucket: INPUT_BUCKET, watchlistPrefix: 'watchlists/', concurrency: 1 },
      { name: 'two.csv', bytes: Buffer.from('Jane,jane@example.com\nClean,clean@example.org\n') },
    );
    const items = await readJson<{ executionName: string }[]>(
      bed.s3.client,
      RESULTS_BUCKET,
      run.prepared.itemsKey,
    );
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
    }>(bed.s3.client, RESULTS_BUCKET, written.summaryKey);
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
    expect(await listKeys(bed.s3.client, RESULTS_BUCKET, prepared.resultsPrefix)).not.toContainEqual(
      expect.stringContaining('/requests/'),
    );
  });
});

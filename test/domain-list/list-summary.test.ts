/** The domain-list workflow's summary: per-domain results from child executions, and the summary written to S3. */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import type { DomainListItem, ListSummary, PreparedDomainList } from '#lambdas/domain-list/contracts';
import { prepareDomainList } from '#lambdas/domain-list/prepare-domain-list';
import {
  buildListSummary,
  domainResultFromFailure,
  domainResultFromIteration,
  writeListSummary,
} from '#lambdas/domain-list/write-list-summary';
import type { RunFinishedDetail } from '#lambdas/platform/runs/run-events';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import { createMemoryLogger } from '../kit/loggers.ts';
import { readJson } from '../kit/s3.ts';
import { deps, RESULTS, s3, useListBed } from './list-fixture.ts';

useListBed();

function outcome(domain: string, state: ScanOutcome['state'], error?: ScanOutcome['error']): ScanOutcome {
  return {
    domain,
    state,
    scanUuid: '6f1c1f7e-64f7-4c55-9f1e-3f7a4f1b2c3d',
    outputPrefix: `scans/${domain}/2026/11/21/6f1c1f7e-64f7-4c55-9f1e-3f7a4f1b2c3d/`,
    manifestKey: state === 'succeeded' ? `scans/${domain}/x/manifest.json` : undefined,
    error,
  };
}

describe('summary', () => {
  it('accounts for every line: scanned, failed, timed out, rejected, invalid, duplicate, ignored', async () => {
    // Prepare
    const prepared: PreparedDomainList = await prepareDomainList(deps, {
      source: {
        type: 'adhoc',
        requestId: 'summary-test',
        domains: [
          'ok.example.com',
          'bad.example.com',
          'slow.example.com',
          'nope.example.com',
          'lost.example.com',
          'ok.example.com',
          'x y',
          '# note',
        ],
      },
    });
    const items = await readJson<DomainListItem[]>(s3.client, RESULTS, prepared.itemsKey);
    const name = (domain: string) => items.find((item) => item.domain === domain)?.executionName ?? '';
    const results = [
      domainResultFromIteration({
        domain: 'ok.example.com',
        executionName: name('ok.example.com'),
        output: outcome('ok.example.com', 'succeeded'),
      }),
      // AWS shape: the sync task fails with States.TaskFailed and the child's DescribeExecution as Cause.
      domainResultFromIteration({
        domain: 'bad.example.com',
        executionName: name('bad.example.com'),
        caught: {
          Error: 'States.TaskFailed',
          Cause: JSON.stringify({
            Status: 'FAILED',
            Error: 'ScanFailed',
            Cause: JSON.stringify(
              outcome('bad.example.com', 'failed', { name: 'ScanFailed', message: 'vendor said failed' }),
            ),
          }),
        },
      }),
      // Local shape: the runner passes the Fail state's error and cause directly.
      domainResultFromFailure(
        'slow.example.com',
        name('slow.example.com'),
        'ScanTimedOut',
        JSON.stringify(
          outcome('slow.example.com', 'timed_out', { name: 'ScanTimedOut', message: 'deadline' }),
        ),
      ),
      domainResultFromFailure(
        'nope.example.com',
        name('nope.example.com'),
        'ScanRejected',
        JSON.stringify(
          outcome('nope.example.com', 'rejected', { name: 'VendorHttpError', message: 'HTTP 400' }),
        ),
      ),
    ].filter((r) => r !== undefined);

    // Act
    const events: RunFinishedDetail[] = [];
    const written = await writeListSummary(
      { ...deps, events: { runFinished: async (detail) => void events.push(detail) } },
      { ...prepared, results },
    );

    // Assess
    const summary = await readJson<ListSummary>(s3.client, RESULTS, written.summaryKey);
    expect(written.summaryKey).toBe(`${prepared.resultsPrefix}summary.json`);
    expect(summary.counts).toEqual({
      succeeded: 1,
      failed: 2,
      timed_out: 1,
      rejected: 1,
      interrupted: 0,
      invalid: 1,
      duplicate: 1,
      lines: 8,
      ignored: 1,
    });
    const c = summary.counts;
    expect(c.succeeded + c.failed + c.timed_out + c.rejected + c.invalid + c.duplicate + c.ignored).toBe(
      c.lines,
    );
    const byDomain = Object.fromEntries(
      summary.domains.filter((d) => d.state !== 'duplicate').map((d) => [d.domain, d]),
    );
    expect(byDomain['ok.example.com']?.manifestKey).toContain('manifest.json');
    expect(byDomain['bad.example.com']?.error?.name).toBe('ScanFailed');
    expect(byDomain['lost.example.com']?.error?.name).toBe('ResultMissing');
    expect(summary.invalid[0]?.line).toBe(7);
    expect(summary.source.type).toBe('adhoc');
    // The run-finished event: counts and where the summary is, never a domain.
    expect(events).toEqual([
      {
        kind: 'domain-list',
        runId: prepared.runId,
        trigger: 'adhoc',
        counts: summary.counts,
        summary: `s3://${RESULTS}/${written.summaryKey}`,
        finishedAt: summary.finishedAt,
        refused: null,
      },
    ]);
    expect(JSON.stringify(events)).not.toMatch(/example\.com/);
  });

  it('still writes the summary when the run-finished event cannot be published, and says so', async () => {
    // Prepare
    const prepared = await prepareDomainList(deps, {
      source: { type: 'adhoc', requestId: 'event-fails', domains: ['ok.example.com'] },
    });
    const logger = createMemoryLogger();
    const failing = {
      runFinished: async () => {
        throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
      },
    };

    // Act
    const written = await writeListSummary(
      { ...deps, logger, events: failing },
      { ...prepared, results: [] },
    );

    // Assess
    expect((await readJson<ListSummary>(s3.client, RESULTS, written.summaryKey)).runId).toBe(prepared.runId);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('run-finished event not published'),
        fields: expect.objectContaining({ errorName: 'ThrottlingException' }),
      }),
    );
  });

  it('names a child that already existed instead of losing it', () => {
    const result = domainResultFromFailure(
      'a.example.com',
      'n',
      'StepFunctions.ExecutionAlreadyExistsException',
      'exists',
    );
    expect(result.error?.name).toBe('StepFunctions.ExecutionAlreadyExistsException');
    expect(result.error?.message).toMatch(/already ran/);
  });

  it('reads the Distributed Map ResultWriter manifest and result files', async () => {
    // Prepare: the files ResultWriter writes, with iteration outputs as JSON strings.
    const prepared = await prepareDomainList(deps, {
      source: { type: 'adhoc', requestId: 'result-writer', domains: ['one.example.com', 'two.example.com'] },
    });
    const items = await readJson<DomainListItem[]>(s3.client, RESULTS, prepared.itemsKey);
    const base = `${prepared.resultsPrefix}map/abc/`;
    const entries = items.map((item) => ({
      Name: 'x',
      Status: 'SUCCEEDED',
      Input: JSON.stringify(item),
      Output: JSON.stringify({
        domain: item.domain,
        executionName: item.executionName,
        output: outcome(item.domain, 'succeeded'),
      }),
    }));
    await s3.client.send(
      new PutObjectCommand({
        Bucket: RESULTS,
        Key: `${base}SUCCEEDED_0.json`,
        Body: JSON.stringify(entries),
      }),
    );
    await s3.client.send(
      new PutObjectCommand({
        Bucket: RESULTS,
        Key: `${base}manifest.json`,
        Body: JSON.stringify({
          ResultFiles: { SUCCEEDED: [{ Key: `${base}SUCCEEDED_0.json`, Size: 1 }], FAILED: [], PENDING: [] },
        }),
      }),
    );

    // Act
    const written = await writeListSummary(deps, {
      ...prepared,
      mapResult: { ResultWriterDetails: { Bucket: RESULTS, Key: `${base}manifest.json` } },
    });

    // Assess
    expect(written.counts.succeeded).toBe(2);
  });

  it('is pure: building a summary needs no I/O and keeps lines in input order', () => {
    const summary = buildListSummary({
      runId: 'r',
      source: { type: 'adhoc', requestId: 'r', inlineDomains: 0 },
      startedAt: undefined,
      finishedAt: '2026-11-21T00:00:00Z',
      lines: 2,
      ignored: 0,
      items: [
        { domain: 'b.example.com', executionName: 'b', runId: 'r', line: 2 },
        { domain: 'a.example.com', executionName: 'a', runId: 'r', line: 1 },
      ],
      rejects: { invalid: [], duplicates: [] },
      results: [],
    });
    expect(summary.domains.map((d) => d.line)).toEqual([1, 2]);
    expect(summary.counts.failed).toBe(2);
  });
});

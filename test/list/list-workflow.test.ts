import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainListItem, ListSummary, PreparedDomainList } from '#lambdas/domain-list/contracts';
import { type ListDeps, parseDomainListInput, prepareDomainList } from '#lambdas/domain-list/list';
import {
  buildListSummary,
  domainResultFromFailure,
  domainResultFromIteration,
  writeListSummary,
} from '#lambdas/domain-list/list-summary';
import { InvalidInputError } from '#lambdas/platform/errors';
import { childExecutionName } from '#lambdas/platform/naming';
import type { RunFinishedDetail } from '#lambdas/platform/run-events';
import type { VendorLogger } from '#lambdas/platform/vendor-api/types';
import type { ScanOutcome } from '#lambdas/scan/contracts';
import { createWriteListSummaryHandler } from '../../lambdas/domain-list/handlers/write-list-summary.ts';
import { type S3rverFixture, startS3rver } from '../../local/embedded-s3.ts';
import { createMemoryLogger } from '../helpers/memory-logger.ts';

const INPUT = 'input-bucket';
const RESULTS = 'results-bucket';
const silent: VendorLogger = { debug() {}, info() {}, warn() {}, error() {} };

let s3: S3rverFixture;
let deps: ListDeps;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [INPUT, RESULTS] });
  deps = {
    s3: s3.client,
    logger: silent,
    settings: { resultsBucket: RESULTS, inputBucket: INPUT },
    clock: () => new Date('2026-11-21T10:00:00Z'),
  };
});

afterAll(async () => {
  await s3.close();
});

async function readJson<T>(bucket: string, key: string): Promise<T> {
  const object = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return JSON.parse((await object.Body?.transformToString()) ?? 'null') as T;
}

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

describe('parseDomainListInput', () => {
  it.each([
    [{}, 'source'],
    [{ source: { type: 'ftp' } }, 'source.type'],
    [{ source: { type: 's3', key: 'incoming/a.txt' } }, 'source.bucket'],
    [{ source: { type: 's3', bucket: INPUT, key: '' } }, 'source.key'],
    [{ source: { type: 'adhoc', requestId: 'r', domains: 'example.com' } }, 'source.domains'],
    [{ source: { type: 'schedule', scheduleName: 's', scheduledTime: 't' } }, 'source'],
  ])('rejects %j naming %s', (event, field) => {
    // Act
    const act = () => parseDomainListInput(event);

    // Assess
    expect(act).toThrow(InvalidInputError);
    try {
      act();
    } catch (error) {
      expect((error as InvalidInputError).input).toBe(field);
    }
  });

  it('accepts each kind of source', () => {
    expect(
      parseDomainListInput({ source: { type: 's3', bucket: INPUT, key: 'incoming/a.txt' } }).source.type,
    ).toBe('s3');
    expect(
      parseDomainListInput({
        source: {
          type: 'schedule',
          scheduleName: 'nightly',
          scheduledTime: '2026-11-21T03:00:00Z',
          domains: ['a.io'],
        },
      }).source.type,
    ).toBe('schedule');
  });
});

describe('the WriteListSummary input', () => {
  const prepared = {
    runId: 'r1',
    source: { type: 'adhoc', requestId: 'q', inlineDomains: 1 },
    startedAt: '2026-11-23T00:00:00Z',
    resultsPrefix: 'lists/adhoc/r1/',
    resultsBucket: 'results',
    itemsKey: 'lists/adhoc/r1/items.json',
    rejectsKey: 'lists/adhoc/r1/rejects.json',
    counts: { lines: 1, valid: 1, invalid: 0, duplicate: 0, ignored: 0 },
  };

  it.each([
    [{ ...prepared, counts: undefined }, 'counts', 'is missing'],
    [
      { ...prepared, counts: { ...prepared.counts, lines: -1 } },
      'counts.lines',
      'must be a whole number >= 0',
    ],
    [{ ...prepared, itemsKey: '' }, 'itemsKey', 'must be a non-empty string'],
    [{ ...prepared, source: { type: 'ftp' } }, 'source.type', 'must be one of s3, schedule, adhoc'],
    [
      { ...prepared, mapResult: { ResultWriterDetails: { Bucket: 'b' } } },
      'mapResult.ResultWriterDetails.Key',
      'is missing',
    ],
  ])('refuses a hand-made input, naming the field (%#)', async (event, field, reason) => {
    // Act
    const attempt = createWriteListSummaryHandler({} as ListDeps)(event);

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'InvalidInputError', input: field, reason });
  });
});

describe('prepareDomainList', () => {
  it('parses an uploaded list into deterministic items and records rejects without stopping', async () => {
    // Prepare
    const key = 'incoming/team lists/week+1 ü.txt';
    const body =
      '\uFEFFexample.com\r\n# comment\r\n\r\nhttps://Example.com/path\r\nnot a domain\r\nbücher.de\r\n';
    await s3.client.send(new PutObjectCommand({ Bucket: INPUT, Key: key, Body: body }));

    // Act
    const prepared = await prepareDomainList(deps, {
      source: { type: 's3', bucket: INPUT, key, etag: 'abc' },
    });

    // Assess
    expect(prepared.counts).toEqual({ lines: 6, valid: 2, invalid: 1, duplicate: 1, ignored: 2 });
    const items = await readJson<DomainListItem[]>(RESULTS, prepared.itemsKey);
    expect(items.map((item) => [item.domain, item.line])).toEqual([
      ['example.com', 1],
      ['xn--bcher-kva.de', 6],
    ]);
    expect(items[0]?.executionName).toBe(childExecutionName(prepared.runId, 'example.com'));
    const rejects = await readJson<{ invalid: { line: number }[]; duplicates: { line: number }[] }>(
      RESULTS,
      prepared.rejectsKey,
    );
    expect(rejects.invalid.map((r) => r.line)).toEqual([5]);
    expect(rejects.duplicates.map((r) => r.line)).toEqual([4]);
    expect(prepared.resultsPrefix.startsWith('lists/')).toBe(true);
  });

  it('gives the same run id and execution names when the same upload is prepared twice', async () => {
    // Prepare
    const key = 'incoming/twice.csv';
    await s3.client.send(
      new PutObjectCommand({ Bucket: INPUT, Key: key, Body: 'domain,owner\na.example.com,x\n' }),
    );
    const source = { type: 's3', bucket: INPUT, key, etag: 'e1' } as const;

    // Act
    const first = await prepareDomainList(deps, { source });
    const second = await prepareDomainList(deps, { source });

    // Assess
    expect(second.runId).toBe(first.runId);
    expect(await readJson(RESULTS, second.itemsKey)).toEqual(await readJson(RESULTS, first.itemsKey));
  });

  it('refuses a list in a bucket other than the input bucket and a key with the wrong suffix, saying why', async () => {
    // Act
    const otherBucket = await prepareDomainList(deps, {
      source: { type: 's3', bucket: RESULTS, key: 'incoming/a.txt' },
    });
    const wrongSuffix = await prepareDomainList(deps, {
      source: { type: 's3', bucket: INPUT, key: 'incoming/a.json' },
    });

    // Assess: refused as a whole, nothing to scan, the reason kept for the summary
    expect(otherBucket.rejected?.reason).toMatch(/source\.bucket/);
    expect(wrongSuffix.rejected?.reason).toMatch(/source\.key/);
    expect(otherBucket.counts).toMatchObject({ lines: 0, valid: 0 });
  });

  it('takes a schedule inline list without reading S3', async () => {
    const prepared = await prepareDomainList(deps, {
      source: {
        type: 'schedule',
        scheduleName: 'nightly',
        scheduledTime: '2026-11-21T03:00:00Z',
        domains: ['a.example.com', 'A.EXAMPLE.COM', '*.bad'],
      },
    });
    expect(prepared.counts).toMatchObject({ valid: 1, duplicate: 1, invalid: 1 });
  });
});

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
    const items = await readJson<DomainListItem[]>(RESULTS, prepared.itemsKey);
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
    const summary = await readJson<ListSummary>(RESULTS, written.summaryKey);
    expect(written.summaryKey).toBe(`${prepared.resultsPrefix}summary.json`);
    expect(summary.counts).toEqual({
      succeeded: 1,
      failed: 2,
      timed_out: 1,
      rejected: 1,
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
    expect((await readJson<ListSummary>(RESULTS, written.summaryKey)).runId).toBe(prepared.runId);
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
    const items = await readJson<DomainListItem[]>(RESULTS, prepared.itemsKey);
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

/** The domain-list workflow's input: parsing the start input and the WriteListSummary input, and preparing the list in S3. */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import type { DomainListItem } from '#lambdas/domain-list/contracts';
import { parseDomainListInput } from '#lambdas/domain-list/contracts';
import type { ListDeps } from '#lambdas/domain-list/deps';
import { prepareDomainList } from '#lambdas/domain-list/prepare-domain-list';
import { InvalidInputError } from '#lambdas/platform/errors';
import { childExecutionName } from '#lambdas/platform/runs/naming';
import { createWriteListSummaryHandler } from '../../lambdas/domain-list/write-list-summary.ts';
import { readJson } from '../kit/s3.ts';
import { deps, INPUT, RESULTS, s3, useListBed } from './list-fixture.ts';

useListBed();

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
    const items = await readJson<DomainListItem[]>(s3.client, RESULTS, prepared.itemsKey);
    expect(items.map((item) => [item.domain, item.line])).toEqual([
      ['example.com', 1],
      ['xn--bcher-kva.de', 6],
    ]);
    expect(items[0]?.executionName).toBe(childExecutionName(prepared.runId, 'example.com'));
    const rejects = await readJson<{ invalid: { line: number }[]; duplicates: { line: number }[] }>(
      s3.client,
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
    expect(await readJson(s3.client, RESULTS, second.itemsKey)).toEqual(
      await readJson(s3.client, RESULTS, first.itemsKey),
    );
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

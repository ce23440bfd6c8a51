import { describe, expect, it } from 'vitest';
import type { DomainListSource } from '#lambdas/domain-list/contracts';
import { InvalidInputError } from '#lambdas/platform/errors';
import {
  childExecutionName,
  listExecutionName,
  listResultsPrefix,
  runIdFor,
} from '#lambdas/platform/runs/naming';

/** Step Functions execution names: 1-80 characters; we also keep to a URL- and log-safe charset. */
const EXECUTION_NAME = /^[A-Za-z0-9_-]{1,80}$/;

const s3Source: DomainListSource = {
  type: 's3',
  bucket: 'input-bucket',
  key: 'incoming/team-a/domains.txt',
  versionId: 'v1',
  etag: 'abc',
};
const scheduleSource: DomainListSource = {
  type: 'schedule',
  scheduleName: 'daily-scan',
  scheduledTime: '2026-11-02T06:00:00Z',
  domains: ['example.com'],
};
const adhocSource: DomainListSource = { type: 'adhoc', requestId: 'req-1', domains: ['example.com'] };

describe('runIdFor', () => {
  it.each([
    ['s3', s3Source],
    ['schedule', scheduleSource],
    ['adhoc', adhocSource],
  ])('is 20 lower-case hex characters and stable for a %s source', (_type, source) => {
    // Act
    const first = runIdFor(source);
    const second = runIdFor(structuredClone(source));

    // Assess
    expect(first).toMatch(/^[0-9a-f]{20}$/);
    expect(second).toBe(first);
  });

  const variants: [string, DomainListSource, DomainListSource][] = [
    ['another bucket', s3Source, { ...s3Source, bucket: 'other-bucket' }],
    ['another key', s3Source, { ...s3Source, key: 'incoming/team-b/domains.txt' }],
    ['another version', s3Source, { ...s3Source, versionId: 'v2' }],
    [
      'another ETag when unversioned',
      { type: 's3', bucket: 'b', key: 'k', etag: 'e1' },
      { type: 's3', bucket: 'b', key: 'k', etag: 'e2' },
    ],
    ['another scheduled time', scheduleSource, { ...scheduleSource, scheduledTime: '2026-11-03T06:00:00Z' }],
    ['another schedule', scheduleSource, { ...scheduleSource, scheduleName: 'weekly-scan' }],
    ['another request', adhocSource, { ...adhocSource, requestId: 'req-2' }],
    [
      'fields that concatenate to the same text',
      { type: 's3', bucket: 'ab', key: 'c', versionId: 'v' },
      { type: 's3', bucket: 'a', key: 'bc', versionId: 'v' },
    ],
    [
      'a schedule versus an adhoc run with look-alike fields',
      { type: 'adhoc', requestId: 'x', domains: [] },
      { type: 'schedule', scheduleName: 'x', scheduledTime: 'x' },
    ],
  ];

  it.each(variants)('changes with %s', (_case, a, b) => {
    expect(runIdFor(a)).not.toBe(runIdFor(b));
  });

  const sameRun: [string, DomainListSource, DomainListSource][] = [
    [
      'the ETag when a version id identifies the object',
      { type: 's3', bucket: 'b', key: 'k', versionId: 'v1', etag: 'e1' },
      { type: 's3', bucket: 'b', key: 'k', versionId: 'v1', etag: 'e2' },
    ],
    [
      'the quotes S3 APIs put around an ETag',
      { type: 's3', bucket: 'b', key: 'k', etag: '"e1"' },
      { type: 's3', bucket: 'b', key: 'k', etag: 'e1' },
    ],
    [
      'the list contents of a schedule fire (one run per fire)',
      scheduleSource,
      { ...scheduleSource, domains: ['other.example'] },
    ],
    ['the domains of an adhoc request', adhocSource, { ...adhocSource, domains: ['other.example'] }],
  ];

  it.each(sameRun)('ignores %s', (_case, a, b) => {
    expect(runIdFor(a)).toBe(runIdFor(b));
  });

  it.each([
    ['source.bucket', { type: 's3', bucket: '', key: 'k' }],
    ['source.key', { type: 's3', bucket: 'b', key: '  ' }],
    ['source.scheduledTime', { type: 'schedule', scheduleName: 'n' }],
    ['source.requestId', { type: 'adhoc', domains: [] }],
    ['source.type', { type: 'ftp' }],
  ])('names %s when the source is incomplete', (field, source) => {
    // Act
    let error: unknown;
    try {
      runIdFor(source as unknown as DomainListSource);
    } catch (caught) {
      error = caught;
    }

    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).input).toBe(field);
  });
});

describe('childExecutionName', () => {
  const runId = runIdFor(s3Source);

  it('is deterministic and made of a readable slug and 40 hex characters', () => {
    // Act
    const name = childExecutionName(runId, 'www.example.com');

    // Assess
    expect(name).toMatch(/^www-example-com-[0-9a-f]{40}$/);
    expect(childExecutionName(runId, 'www.example.com')).toBe(name);
  });

  it('differs across runs and across domains', () => {
    // Prepare
    const otherRun = runIdFor({ ...s3Source, versionId: 'v2' });
    const domains = Array.from({ length: 1_000 }, (_, i) => `host${i}.example.com`);

    // Act
    const names = new Set([
      ...domains.map((d) => childExecutionName(runId, d)),
      ...domains.map((d) => childExecutionName(otherRun, d)),
    ]);

    // Assess
    expect(names.size).toBe(2_000);
  });

  it('differs for domains whose slugs collide', () => {
    // Prepare: both slugs truncate to the same 30 characters.
    const prefix = `${'a'.repeat(40)}`;

    // Act
    const one = childExecutionName(runId, `${prefix}.one.com`);
    const two = childExecutionName(runId, `${prefix}.two.com`);

    // Assess
    expect(one.slice(0, 30)).toBe(two.slice(0, 30));
    expect(one).not.toBe(two);
  });

  it.each([
    ['a short domain', 'a.io'],
    ['a 253-character domain', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`],
    ['a long punycode domain', `xn--${'bcher-kva'.repeat(6)}.${'x'.repeat(60)}.de`],
    ['a long unicode domain passed as is', `${'ü'.repeat(60)}.例え.テスト`],
    ['an all-unicode domain', '例え.テスト'],
    ['a domain with odd characters', 'a b/c\\d:e*f?.com'],
    ['a domain starting with hyphen-like slug', '---.example'],
  ])('meets the Step Functions name rules for %s', (_case, domain) => {
    // Act
    const name = childExecutionName(runId, domain);

    // Assess
    expect(name).toMatch(EXECUTION_NAME);
    expect(name.length).toBeLessThanOrEqual(71);
    expect(name).not.toMatch(/^-|--[0-9a-f]{40}$/);
  });

  it('rejects an empty run id or domain', () => {
    expect(() => childExecutionName('', 'example.com')).toThrow(InvalidInputError);
    expect(() => childExecutionName(runId, '')).toThrow(InvalidInputError);
  });
});

describe('listExecutionName', () => {
  it.each([
    ['s3', s3Source],
    ['schedule', scheduleSource],
    ['adhoc', adhocSource],
  ])('is list-<runId> and a valid execution name for a %s source', (_type, source) => {
    // Act
    const name = listExecutionName(source);

    // Assess
    expect(name).toBe(`list-${runIdFor(source)}`);
    expect(name).toMatch(EXECUTION_NAME);
  });

  it('differs between two fires of the same schedule', () => {
    // Act
    const monday = listExecutionName({ ...scheduleSource, scheduledTime: '2026-11-02T06:00:00Z' });
    const tuesday = listExecutionName({ ...scheduleSource, scheduledTime: '2026-11-03T06:00:00Z' });

    // Assess
    expect(monday).not.toBe(tuesday);
  });
});

describe('listResultsPrefix', () => {
  const runId = 'abcdef0123456789abcd';

  it.each<[string, DomainListSource, string]>([
    ['an S3 key without its extension', s3Source, 'lists/incoming/team-a/domains/abcdef0123456789abcd/'],
    [
      'only the last extension',
      { type: 's3', bucket: 'b', key: 'x/archive.tar.gz' },
      'lists/x/archive.tar/abcdef0123456789abcd/',
    ],
    [
      'a key without extension',
      { type: 's3', bucket: 'b', key: 'domains' },
      'lists/domains/abcdef0123456789abcd/',
    ],
    ['a dotfile name', { type: 's3', bucket: 'b', key: 'in/.list' }, 'lists/in/.list/abcdef0123456789abcd/'],
    [
      'a dot in a folder name',
      { type: 's3', bucket: 'b', key: 'v1.2/list' },
      'lists/v1.2/list/abcdef0123456789abcd/',
    ],
    [
      'unicode and spaces',
      { type: 's3', bucket: 'b', key: 'incoming/Équipe A/domaines été.csv' },
      'lists/incoming/Équipe A/domaines été/abcdef0123456789abcd/',
    ],
    [
      'a key with a leading slash and doubled slashes',
      { type: 's3', bucket: 'b', key: '/incoming//team//list.txt' },
      'lists/incoming/team/list/abcdef0123456789abcd/',
    ],
    [
      'a key with dot segments',
      { type: 's3', bucket: 'b', key: 'incoming/../../etc/./list.txt' },
      'lists/incoming/etc/list/abcdef0123456789abcd/',
    ],
    [
      'a key with control characters',
      { type: 's3', bucket: 'b', key: 'in/li\u0000st\u001f.txt' },
      'lists/in/list/abcdef0123456789abcd/',
    ],
    [
      'a key that is only slashes',
      { type: 's3', bucket: 'b', key: '///' },
      'lists/unnamed/abcdef0123456789abcd/',
    ],
    ['a schedule', scheduleSource, 'lists/schedules/daily-scan/abcdef0123456789abcd/'],
    [
      'a schedule name with a slash',
      { type: 'schedule', scheduleName: 'team/a', scheduledTime: 't' },
      'lists/schedules/team-a/abcdef0123456789abcd/',
    ],
    ['an adhoc run', adhocSource, 'lists/adhoc/abcdef0123456789abcd/'],
  ])('uses %s', (_case, source, expected) => {
    expect(listResultsPrefix(source, runId)).toBe(expected);
  });

  it('keeps the whole results key within the S3 1,024-byte limit for a maximal source key', () => {
    // Prepare: a 1,024-byte key of 3-byte characters.
    const key = `${'界'.repeat(340)}.txt`;

    // Act
    const prefix = listResultsPrefix({ type: 's3', bucket: 'b', key }, runId);

    // Assess
    expect(Buffer.byteLength(`${prefix}summary.json`, 'utf8')).toBeLessThanOrEqual(1_024);
    expect(prefix.endsWith(`/${runId}/`)).toBe(true);
    expect(prefix).not.toContain('\ufffd');
  });

  it('rejects a run id that is not a safe key segment', () => {
    expect(() => listResultsPrefix(adhocSource, '../x')).toThrow(InvalidInputError);
  });
});

/**
 * The learned scan durations against the embedded S3 server: what StartScan expects, what
 * WriteManifest learns, and that nothing stored there (garbage, oversized, racing writers) can
 * fail a scan or grow the object without bound.
 */
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PollState } from '#lambdas/scan/contracts';
import { createScanDeps, NO_VENDOR_ACCESS, type ScanDeps } from '#lambdas/scan/deps';
import {
  expectedDurationOf,
  LEARNED_DURATIONS_KEY,
  type LearnedDurations,
  learnedSampleSeconds,
  learnScanDuration,
  MAX_LEARNED_DURATIONS_BYTES,
  MAX_WINDOW_RATIO,
  SAMPLES_PER_DOMAIN,
  withSample,
} from '#lambdas/scan/learned-durations';
import { createScanSettings } from '#lambdas/scan/settings';
import { type S3rverFixture, startS3rver } from '../../local/embedded-s3.ts';
import { createMemoryLogger, type MemoryLogger } from '../kit/loggers.ts';
import { readJson, readObject } from '../kit/s3.ts';

const BUCKET = 'learned-results';
let s3: S3rverFixture;
let logger: MemoryLogger;
let deps: ScanDeps;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [BUCKET] });
});

afterAll(async () => {
  await s3.close();
});

beforeEach(async () => {
  await s3.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: LEARNED_DURATIONS_KEY }));
  logger = createMemoryLogger();
  deps = createScanDeps({
    s3: s3.client,
    scanClient: NO_VENDOR_ACCESS,
    logger,
    settings: createScanSettings({ resultsBucket: BUCKET }),
  });
});

const EMPTY: LearnedDurations = { schemaVersion: 1, overall: [], domains: {} };

/** A finished scan's poll state: still running at `previous` seconds, done at `last`. */
const finishedAt = (previous: number, last: number): PollState => ({
  attempt: 3,
  nextWaitSeconds: 60,
  waitedSeconds: last,
  startedAt: '2026-11-20T10:00:00.000Z',
  deadlineExceeded: false,
  ageAtPreviousPollSeconds: previous,
  ageAtLastPollSeconds: last,
});

const warnings = () => logger.lines.filter((line) => line.level === 'warn');

async function store(body: string | Buffer): Promise<void> {
  await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: LEARNED_DURATIONS_KEY, Body: body }));
}

describe('learning and expecting', () => {
  it('expects nothing before anything is learned, without a warning', async () => {
    expect(await expectedDurationOf(deps, 'a.example.com')).toBeUndefined();
    expect(warnings()).toEqual([]);
  });

  it("learns the middle of the last two polls, and expects a domain's own window before the overall one", async () => {
    // Act
    await learnScanDuration(deps, 'a.example.com', finishedAt(1700, 1900));
    await learnScanDuration(deps, 'a.example.com', finishedAt(1600, 1760));
    await learnScanDuration(deps, 'b.example.com', finishedAt(290, 310));

    // Assess
    expect(await expectedDurationOf(deps, 'a.example.com')).toEqual({
      earliestSeconds: 1680,
      latestSeconds: 1800,
      basis: 'domain',
    });
    expect(await expectedDurationOf(deps, 'b.example.com')).toMatchObject({
      earliestSeconds: 300,
      basis: 'domain',
    });
    // Overall: 300..1800 is wider than MAX_WINDOW_RATIO, so a new domain expects nothing.
    expect(1800 / 300).toBeGreaterThan(MAX_WINDOW_RATIO);
    expect(await expectedDurationOf(deps, 'new.example.com')).toBeUndefined();
    expect(warnings()).toEqual([]);
  });

  it('falls back to all domains when the domain has no history and the overall window is narrow', async () => {
    await learnScanDuration(deps, 'a.example.com', finishedAt(1700, 1900));
    await learnScanDuration(deps, 'b.example.com', finishedAt(1500, 1700));
    expect(await expectedDurationOf(deps, 'c.example.com')).toEqual({
      earliestSeconds: 1600,
      latestSeconds: 1800,
      basis: 'overall',
    });
  });

  it('keeps only the most recent samples of a domain', async () => {
    for (let scan = 1; scan <= SAMPLES_PER_DOMAIN + 3; scan++) {
      await learnScanDuration(deps, 'a.example.com', finishedAt(1000 + scan * 10, 1000 + scan * 10));
    }
    const stored = await readJson<LearnedDurations>(s3.client, BUCKET, LEARNED_DURATIONS_KEY);
    expect(stored.domains['a.example.com']).toHaveLength(SAMPLES_PER_DOMAIN);
    expect(stored.domains['a.example.com']?.at(-1)).toBe(1000 + (SAMPLES_PER_DOMAIN + 3) * 10);
  });

  it('takes the wait before the first poll as the interval when the first poll found the scan done', () => {
    expect(learnedSampleSeconds(finishedAt(0, 60))).toBe(30);
    // A payload from before these fields existed still teaches its scheduled age.
    const { ageAtLastPollSeconds: _a, ageAtPreviousPollSeconds: _p, ...old } = finishedAt(0, 600);
    expect(learnedSampleSeconds(old)).toBe(600);
  });
});

describe('hostile or broken stored objects', () => {
  const garbage: [string, string | Buffer][] = [
    ['not JSON', '{"schemaVersion": 1, "overall": ['],
    ['JSON of the wrong type', '[1, 2, 3]'],
    ['an unknown version', JSON.stringify({ ...EMPTY, schemaVersion: 2 })],
    ['an unknown field', JSON.stringify({ ...EMPTY, extra: true })],
    ['a negative duration', JSON.stringify({ ...EMPTY, overall: [-5] })],
    ['a fractional duration', JSON.stringify({ ...EMPTY, overall: [12.5] })],
    ['a duration beyond the longest deadline', JSON.stringify({ ...EMPTY, overall: [10 ** 12] })],
    ['too many samples', JSON.stringify({ ...EMPTY, domains: { 'a.example.com': Array(100).fill(60) } })],
    ['a name longer than any domain', JSON.stringify({ ...EMPTY, domains: { ['x'.repeat(300)]: [60] } })],
    ['an oversized object', Buffer.alloc(MAX_LEARNED_DURATIONS_BYTES + 1, 0x20)],
    ['an empty object', ''],
    ['nesting 10,000 deep', `${'['.repeat(10_000)}${']'.repeat(10_000)}`],
  ];

  it.each(garbage)('ignores %s with a log line and expects nothing', async (_what, body) => {
    // Prepare
    await store(body);

    // Act
    const expected = await expectedDurationOf(deps, 'a.example.com');

    // Assess
    expect(expected).toBeUndefined();
    expect(warnings().map((line) => line.message)).toEqual([
      'Learned scan durations ignored: the scan polls as if nothing were learned',
    ]);
  });

  it.each(garbage)('replaces %s with a valid object when a scan is learned', async (_what, body) => {
    // Prepare
    await store(body);

    // Act
    await learnScanDuration(deps, 'a.example.com', finishedAt(1700, 1900));

    // Assess
    expect(await readJson(s3.client, BUCKET, LEARNED_DURATIONS_KEY)).toEqual({
      schemaVersion: 1,
      overall: [1800],
      domains: { 'a.example.com': [1800] },
    });
    expect(await expectedDurationOf(deps, 'a.example.com')).toMatchObject({ earliestSeconds: 1800 });
  });

  it('never expects a window wider than MAX_WINDOW_RATIO, whatever the samples', async () => {
    await store(
      JSON.stringify({ ...EMPTY, domains: { 'a.example.com': [100, 100 * MAX_WINDOW_RATIO + 1] } }),
    );
    expect(await expectedDurationOf(deps, 'a.example.com')).toBeUndefined();
  });

  it('a read that fails (no such bucket) is a log line, not an error', async () => {
    const lost = createScanDeps({
      s3: s3.client,
      scanClient: NO_VENDOR_ACCESS,
      logger,
      settings: createScanSettings({ resultsBucket: 'no-such-bucket' }),
    });
    expect(await expectedDurationOf(lost, 'a.example.com')).toBeUndefined();
    await expect(learnScanDuration(lost, 'a.example.com', finishedAt(10, 20))).resolves.toBeUndefined();
    expect(warnings().length).toBe(2);
  });
});

describe('bounds and races', () => {
  it('stays within its byte bound, dropping the least recently scanned domains first', () => {
    // Prepare: more long domain names than fit
    let durations: LearnedDurations = EMPTY;
    const names = Array.from({ length: 800 }, (_, i) => `${'d'.repeat(200)}-${i}.example.com`);

    // Act
    for (const name of names) durations = withSample(durations, name, 600);

    // Assess
    expect(Buffer.byteLength(JSON.stringify(durations))).toBeLessThanOrEqual(MAX_LEARNED_DURATIONS_BYTES);
    const kept = Object.keys(durations.domains);
    expect(kept.length).toBeGreaterThan(400);
    expect(kept.length).toBeLessThan(names.length);
    expect(kept.at(-1)).toBe(names.at(-1));
    expect(kept).not.toContain(names[0]);
  });

  it('loses no sample unseen when manifests are written at once: each is stored or its loss logged', async () => {
    // Act
    const domains = Array.from({ length: 6 }, (_, i) => `race-${i}.example.com`);
    await Promise.all(domains.map((domain) => learnScanDuration(deps, domain, finishedAt(100, 140))));

    // Assess
    const stored = await readJson<LearnedDurations>(s3.client, BUCKET, LEARNED_DURATIONS_KEY);
    const kept = Object.keys(stored.domains);
    const lost = warnings().filter((line) => line.message.startsWith('Scan duration not learned'));
    expect(kept.length).toBeGreaterThanOrEqual(1);
    expect(kept.length + lost.length).toBe(domains.length);
    expect(stored.overall).toHaveLength(kept.length);
    // Still a valid object for the next scan.
    expect(JSON.parse((await readObject(s3.client, BUCKET, LEARNED_DURATIONS_KEY)).toString())).toEqual(
      stored,
    );
  });
});

describe('nesting', () => {
  it('refuses deep nesting before parsing it, and says so', async () => {
    // Prepare: within the byte bound, but far deeper than the object's own 3 levels.
    await store(
      `{"schemaVersion":1,"overall":[],"domains":{"a.example.com":${'['.repeat(5_000)}${']'.repeat(5_000)}}}`,
    );

    // Act
    const expected = await expectedDurationOf(deps, 'a.example.com');

    // Assess
    expect(expected).toBeUndefined();
    expect(JSON.stringify(warnings())).toContain('nested deeper than 4');
  });
});

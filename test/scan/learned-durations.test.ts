/**
 * The learned scan durations against the embedded S3 server: what StartScan expects, what
 * WriteManifest learns, and that nothing stored there (garbage, oversized, racing writers) can
 * fail a scan, lose a sample or grow a record without bound.
 */
import { DeleteObjectsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PollState } from '#lambdas/scan/contracts';
import { createScanDeps, NO_VENDOR_ACCESS, type ScanDeps } from '#lambdas/scan/deps';
import {
  expectationFrom,
  expectedDurationOf,
  learnedDurationsKey,
  learnedSampleSeconds,
  learnScanDuration,
  MAX_WINDOW_RATIO,
  SAMPLES_PER_DOMAIN,
} from '#lambdas/scan/learned-durations';
import { type DurationRecord, MAX_RECORD_BYTES } from '#lambdas/scan/learned-record';
import { createScanSettings } from '#lambdas/scan/settings';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { createMemoryLogger, type MemoryLogger } from '../kit/loggers.ts';
import { listKeys, readJson } from '../kit/s3.ts';

const BUCKET = 'learned-results';
const ONE_BY_ONE = 'learned-one-by-one';
let s3: S3rverFixture;
let logger: MemoryLogger;
let deps: ScanDeps;

const depsFor = (bucket: string): ScanDeps =>
  createScanDeps({
    s3: s3.client,
    scanClient: NO_VENDOR_ACCESS,
    logger,
    settings: createScanSettings({ resultsBucket: bucket }),
  });

async function emptyBucket(bucket: string): Promise<void> {
  const keys = await listKeys(s3.client, bucket);
  for (let i = 0; i < keys.length; i += 1000) {
    await s3.client.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })) },
      }),
    );
  }
}

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [BUCKET, ONE_BY_ONE] });
});

afterAll(async () => {
  await s3.close();
});

beforeEach(async () => {
  await emptyBucket(BUCKET);
  await emptyBucket(ONE_BY_ONE);
  logger = createMemoryLogger();
  deps = depsFor(BUCKET);
});

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
/** A scan that teaches exactly `seconds`. */
const took = (seconds: number): PollState => finishedAt(seconds, seconds);

const warnings = () => logger.lines.filter((line) => line.level === 'warn');

async function store(domain: string, body: string | Buffer): Promise<void> {
  await s3.client.send(
    new PutObjectCommand({ Bucket: BUCKET, Key: learnedDurationsKey(domain), Body: body }),
  );
}

describe('learning and expecting', () => {
  it('expects nothing before anything is learned, without a warning', async () => {
    expect(await expectedDurationOf(deps, 'a.example.com')).toBeUndefined();
    expect(warnings()).toEqual([]);
  });

  it("learns the middle of the last two polls into the domain's own record, and expects from it", async () => {
    // Act
    await learnScanDuration(deps, 'a.example.com', finishedAt(1700, 1900));
    await learnScanDuration(deps, 'a.example.com', finishedAt(1600, 1760));
    await learnScanDuration(deps, 'b.example.com', finishedAt(290, 310));

    // Assess
    expect(await readJson(s3.client, BUCKET, 'learned/scan-durations/domains/com.example.a.json')).toEqual({
      schemaVersion: 1,
      samples: [1800, 1680],
    });
    expect(await expectedDurationOf(deps, 'a.example.com')).toEqual({
      earliestSeconds: 1680,
      latestSeconds: 1800,
      basis: 'domain',
    });
    expect(await expectedDurationOf(deps, 'b.example.com')).toEqual({
      earliestSeconds: 300,
      latestSeconds: 300,
      basis: 'domain',
    });
    expect(warnings()).toEqual([]);
  });

  it('gives a domain never scanned the latest durations of its neighbours in key order (reversed labels)', async () => {
    // Prepare: three example.com domains take about 25 minutes; two example.org ones 90 s
    for (const [name, seconds] of [
      ['a', 1450],
      ['b', 1550],
      ['teacher', 1500],
    ] as const) {
      await learnScanDuration(deps, `${name}.example.com`, took(seconds));
    }
    for (const name of ['a', 'b']) await learnScanDuration(deps, `${name}.example.org`, took(90));

    // Act: com.example.fresh sits among com.example.*, and the listing wraps past org.example.*
    const fresh = await expectedDurationOf(deps, 'fresh.example.com');

    // Assess: each neighbour counts once, and the window most of them share wins
    expect(fresh).toEqual({ earliestSeconds: 1450, latestSeconds: 1550, basis: 'neighbours' });
    expect(warnings()).toEqual([]);
  });

  it('keeps only the most recent samples of a domain', async () => {
    for (let scan = 1; scan <= SAMPLES_PER_DOMAIN + 3; scan++) {
      await learnScanDuration(deps, 'a.example.com', took(1000 + scan * 10));
    }
    const stored = await readJson<DurationRecord>(s3.client, BUCKET, learnedDurationsKey('a.example.com'));
    expect(stored.samples).toHaveLength(SAMPLES_PER_DOMAIN);
    expect(stored.samples.at(-1)).toBe(1000 + (SAMPLES_PER_DOMAIN + 3) * 10);
  });

  it('takes the wait before the first poll as the interval when the first poll found the scan done', () => {
    expect(learnedSampleSeconds(finishedAt(0, 60))).toBe(30);
    // A payload from before these fields existed still teaches its scheduled age.
    const { ageAtLastPollSeconds: _a, ageAtPreviousPollSeconds: _p, ...old } = finishedAt(0, 600);
    expect(learnedSampleSeconds(old)).toBe(600);
  });

  it('refuses a name that is not a normalised domain as a key, and then learns and expects nothing, never failing', async () => {
    for (const bad of ['../x', 'a/b.example.com', 'A.example.com', '', `${'a'.repeat(254)}`]) {
      expect(() => learnedDurationsKey(bad), bad).toThrow(/not a normalised domain name/);
      await expect(learnScanDuration(deps, bad, took(60))).resolves.toBeUndefined();
      await expect(expectedDurationOf(deps, bad)).resolves.toBeUndefined();
    }
    expect(await listKeys(s3.client, BUCKET)).toEqual([]);
  });
});

describe('mixed durations', () => {
  it('a new domain among 10-minute and 2-hour neighbours expects the window most of them share, never nothing', async () => {
    // Prepare: five 10-minute and three 2-hour domains next to the new one
    for (const [index, seconds] of [600, 7200, 620, 590, 7100, 610, 7300, 640].entries()) {
      await learnScanDuration(deps, `n${index}.mixed.example`, took(seconds));
    }

    // Act
    const expected = await expectedDurationOf(deps, 'fresh.mixed.example');

    // Assess
    expect(expected).toEqual({ earliestSeconds: 590, latestSeconds: 640, basis: 'neighbours' });
  });

  it('the window never spans more than MAX_WINDOW_RATIO and holds the most samples (generated spreads)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 604_800 }), { minLength: 1, maxLength: 32 }),
        (samples) => {
          const window = expectationFrom(samples, 'domain');
          expect(window).toBeDefined();
          const { earliestSeconds, latestSeconds } = window as NonNullable<typeof window>;
          expect(latestSeconds).toBeLessThanOrEqual(earliestSeconds * MAX_WINDOW_RATIO);
          const inside = samples.filter((s) => s >= earliestSeconds && s <= latestSeconds).length;
          for (const start of samples) {
            const other = samples.filter((s) => s >= start && s <= start * MAX_WINDOW_RATIO).length;
            expect(inside).toBeGreaterThanOrEqual(other);
          }
        },
      ),
      { seed: 45, numRuns: 300 },
    );
  });
});

describe('scans finishing together', () => {
  it('counts every duration of 200 scans finishing at once, as if they had finished one by one', async () => {
    // Prepare: 200 scans of 170 domains (30 domains scanned twice, both finishing at once), with
    // durations drawn from a few seconds to a day
    const domains = Array.from({ length: 170 }, (_, i) => `d${i}.list${i % 7}.example.net`);
    const scans = [...domains, ...domains.slice(0, 30)].map((domain, i) => ({ domain, index: i }));
    const seconds = fc.sample(fc.integer({ min: 5, max: 86_400 }), { numRuns: scans.length, seed: 45 });
    const one = depsFor(ONE_BY_ONE);

    // Act: all at once into one bucket, one after another into the other
    await Promise.all(
      scans.map(({ domain, index }) => learnScanDuration(deps, domain, took(seconds[index] ?? 60))),
    );
    for (const { domain, index } of scans) await learnScanDuration(one, domain, took(seconds[index] ?? 60));

    // Assess: the twice-scanned domains' writers did race (a write retried after a conflict),
    // nothing was lost (no warning at all), and every domain (and a new one) expects the same either way
    const retried = logger.lines.filter(
      (line) => line.message === 'Scan duration learned' && Number(line.fields.attempt) > 1,
    );
    expect(retried.length).toBeGreaterThan(0);
    expect(warnings()).toEqual([]);
    for (const domain of [...domains, 'new.list3.example.net', 'zzz.example.org']) {
      expect(await expectedDurationOf(deps, domain), domain).toEqual(await expectedDurationOf(one, domain));
    }
    const together = await Promise.all(
      domains.map(async (domain) => {
        const record = await readJson<DurationRecord>(s3.client, BUCKET, learnedDurationsKey(domain));
        return [...record.samples].sort((a, b) => a - b);
      }),
    );
    const counted = together.reduce((sum, samples) => sum + samples.length, 0);
    expect(counted).toBe(scans.length);
  }, 60_000);
});

describe('hostile or broken stored records', () => {
  const garbage: [string, string | Buffer][] = [
    ['not JSON', '{"schemaVersion": 1, "samples": ['],
    ['JSON of the wrong type', '[1, 2, 3]'],
    ['an unknown version', JSON.stringify({ schemaVersion: 2, samples: [] })],
    ['an unknown field', JSON.stringify({ schemaVersion: 1, samples: [], extra: true })],
    ['a negative duration', JSON.stringify({ schemaVersion: 1, samples: [-5] })],
    ['a fractional duration', JSON.stringify({ schemaVersion: 1, samples: [12.5] })],
    ['a duration beyond the longest deadline', JSON.stringify({ schemaVersion: 1, samples: [10 ** 12] })],
    ['too many samples', JSON.stringify({ schemaVersion: 1, samples: Array(100).fill(60) })],
    ['an oversized object', Buffer.alloc(MAX_RECORD_BYTES + 1, 0x20)],
    ['an empty object', ''],
    ['nesting 10,000 deep', `${'['.repeat(10_000)}${']'.repeat(10_000)}`],
  ];

  it.each(garbage)('ignores %s with a log line and expects nothing', async (_what, body) => {
    // Prepare
    await store('a.example.com', body);

    // Act
    const expected = await expectedDurationOf(deps, 'a.example.com');

    // Assess
    expect(expected).toBeUndefined();
    expect(warnings().map((line) => line.message)).toEqual([
      'Learned scan durations ignored: the scan polls as if nothing were learned from them',
    ]);
  });

  it.each(garbage)('replaces %s with a valid record when a scan is learned', async (_what, body) => {
    // Prepare
    await store('a.example.com', body);

    // Act
    await learnScanDuration(deps, 'a.example.com', finishedAt(1700, 1900));

    // Assess
    expect(await readJson(s3.client, BUCKET, learnedDurationsKey('a.example.com'))).toEqual({
      schemaVersion: 1,
      samples: [1800],
    });
    expect(await expectedDurationOf(deps, 'a.example.com')).toMatchObject({ earliestSeconds: 1800 });
  });

  it('a read that fails (no such bucket) is a log line, not an error', async () => {
    const lost = depsFor('no-such-bucket');
    expect(await expectedDurationOf(lost, 'a.example.com')).toBeUndefined();
    await expect(learnScanDuration(lost, 'a.example.com', finishedAt(10, 20))).resolves.toBeUndefined();
    expect(warnings().length).toBeGreaterThanOrEqual(2);
  });
});

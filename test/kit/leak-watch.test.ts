/**
 * The leak watch itself (test/kit/leak-watch.ts): what it finds, and that it finds it where a chunked
 * read would split it. Each test takes the leaks it made on purpose, so this file passes the check
 * test/setup.ts runs after it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3rver } from '#local/services/s3/embedded-s3';
import { checkDirectory, checkText, takeLeaks, watchAddresses, watchKeys } from './leak-watch.ts';

const KEY = 'WatchTestKeyHarpsichord';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'leak-watch-'));
  watchKeys(KEY);
  takeLeaks();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the leak watch', () => {
  it('finds a watched key in a text, and its lower-cased form, naming it by position only', () => {
    checkText('a terminal line', `done ${KEY}`);
    checkText('an S3 key', `breach/reports/rpt-${KEY.toLowerCase()}-1/`);
    checkText('a clean line', 'done [REDACTED]');
    const { leaks } = takeLeaks();
    expect(leaks.map((leak) => leak.where)).toEqual(['a terminal line', 'an S3 key']);
    expect(JSON.stringify(leaks)).not.toContain(KEY);
  });

  it("finds a key split across a file's read chunks, and one in a file's name", async () => {
    const head = randomBytes(64 * 1024 - 7)
      .toString('base64url')
      .slice(0, 64 * 1024 - 7);
    await writeFile(join(dir, 'split.bin'), `${head}${KEY}${'x'.repeat(1000)}`);
    await writeFile(join(dir, `name-${KEY}.txt`), 'clean');

    await checkDirectory('stored', dir);

    const where = takeLeaks().leaks.map((leak) => leak.where);
    expect(where).toContain('stored split.bin');
    expect(where).toContainEqual(expect.stringMatching(/^stored name-\[key \d+\]\.txt \(its name\)$/));
    expect(JSON.stringify(where)).not.toContain(KEY);
  });

  it("finds a sent address in any case and either domain form, but not in the person's own records", () => {
    watchAddresses('Zelda.Watch@bücher-test.example');
    checkText('a manifest', '{"reportName":"ZELDA.WATCH@XN--BCHER-TEST-9DB.EXAMPLE-2026"}');
    checkText('a log line', 'for zelda.watch@bücher-test.example');
    checkText(
      'S3 object breach-results/breach/requests/p-1.json',
      '{"emails":["zelda.watch@bücher-test.example"]}',
    );
    checkText(
      'S3 object pipeline-input/watchlists/vip.csv._S3rver_object',
      'zelda.watch@bücher-test.example',
    );
    const { leaks } = takeLeaks();
    expect(leaks.map((leak) => leak.where)).toEqual(['a manifest', 'a log line']);
    expect(JSON.stringify(leaks)).not.toMatch(/zelda/i);
  });

  it("finds a key in an S3 object's content type and user metadata, not only in its bytes", async () => {
    const s3 = await startS3rver({ buckets: ['leak-watch'] });
    try {
      await s3.client.send(
        new PutObjectCommand({
          Bucket: 'leak-watch',
          Key: 'clean.txt',
          Body: 'clean',
          ContentType: `text/plain; served-for=${KEY}`,
        }),
      );
      await s3.client.send(
        new PutObjectCommand({
          Bucket: 'leak-watch',
          Key: 'meta.txt',
          Body: 'clean',
          Metadata: { 'source-etag': `"${KEY}"` },
        }),
      );
      await checkDirectory('S3 object', s3.directory);
    } finally {
      await s3.close();
    }
    const where = takeLeaks().leaks.map((leak) => leak.where);
    expect(where).toContainEqual(expect.stringMatching(/clean\.txt\._S3rver_metadata\.json$/));
    expect(where).toContainEqual(expect.stringMatching(/meta\.txt\._S3rver_metadata\.json$/));
  });
});

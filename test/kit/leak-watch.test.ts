/**
 * The leak watch itself (test/kit/leak-watch.ts): what it finds, and that it finds it where a chunked
 * read would split it. Each test takes the leaks it made on purpose, so this file passes the check
 * test/setup.ts runs after it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDirectory, checkText, takeLeaks, watchKeys } from './leak-watch.ts';

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
});

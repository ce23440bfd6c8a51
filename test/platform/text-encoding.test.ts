/**
 * A list saved in another encoding than UTF-8 is refused once, naming the encoding and how to
 * convert it, for domain lists (as the intake streams them from S3, and as `npm start` reads them)
 * and watchlists alike. A UTF-16 list once read as "control character" on every line, and a
 * Latin-1 `bücher.de` as `label 'b�cher' is not a valid internationalized label`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { linesFromStream } from '#lambdas/domain-list/domain-list';
import { InvalidInputError } from '#lambdas/platform/errors';
import { notUtf8Reason } from '#lambdas/platform/input/text-encoding';
import { parseWatchlist } from '#lambdas/watchlist/watchlist';
import { filesUnder, runCli } from '../local/cli-run.ts';

const utf16le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
const utf16be = (text: string) => Buffer.from(utf16le(text).map((_, i, all) => all[i ^ 1] as number));
const latin1 = (text: string) => Buffer.from(text, 'latin1');

describe('notUtf8Reason', () => {
  it.each([
    [
      'UTF-16LE with its byte order mark',
      utf16le('a.example.com\n'),
      /^is UTF-16LE text \(it starts with the byte order mark 0xFF 0xFE\), not UTF-8: convert it to UTF-8 first, e\.g\. iconv -f UTF-16 -t UTF-8 list\.txt > list\.utf8\.txt$/,
    ],
    [
      'UTF-16BE with its byte order mark',
      utf16be('a.example.com\n'),
      /^is UTF-16BE text \(it starts with the byte order mark 0xFE 0xFF\)/,
    ],
    [
      'UTF-16LE without a mark',
      Buffer.from('a.example.com\n', 'utf16le'),
      /every other byte is zero, as in UTF-16LE text .*iconv -f UTF-16LE -t UTF-8 list\.txt/,
    ],
    [
      'Latin-1',
      latin1('a.example.com\nbücher.de\n'),
      /^is not UTF-8: line 2 has the byte 0xFC, .*\(Latin-1 or Windows-1252 text\?\); .*iconv -f WINDOWS-1252 -t UTF-8 list\.txt > list\.utf8\.txt$/,
    ],
  ])('names %s and how to convert it', (_, bytes, reason) => {
    expect(notUtf8Reason(bytes, { file: 'list.txt' })).toMatch(reason);
  });

  it.each([
    ['ASCII', Buffer.from('a.example.com\n')],
    [
      'UTF-8 with a BOM, 2-, 3- and 4-byte characters',
      Buffer.from('\uFEFFbücher.de\nмосква.рф\n例え.jp # 😀\n'),
    ],
  ])('passes %s', (_, bytes) => {
    expect(notUtf8Reason(bytes, { file: 'list.txt' })).toBeUndefined();
  });

  it('quotes a file name the shell would split', () => {
    expect(notUtf8Reason(utf16le('x\n'), { file: "team list's.txt" })).toContain(
      `iconv -f UTF-16 -t UTF-8 'team list'\\''s.txt' > 'team list'\\''s.utf8.txt'`,
    );
  });
});

async function linesOf(chunks: Uint8Array[]): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of linesFromStream(
    (async function* () {
      yield* chunks;
    })(),
    { fileName: 'weekly.txt' },
  ))
    lines.push(line);
  return lines;
}

describe('a domain list read from S3 (linesFromStream)', () => {
  it('reads UTF-8 whose characters are split across chunks', async () => {
    const bytes = Buffer.from('bücher.de\nмосква.рф\n');
    expect(await linesOf([bytes.subarray(0, 2), bytes.subarray(2, 13), bytes.subarray(13)])).toEqual([
      'bücher.de',
      'москва.рф',
    ]);
  });

  it('refuses a UTF-16 list once, naming the encoding', async () => {
    await expect(linesOf([utf16le('a.example.com\nb.example.com\n')])).rejects.toThrow(
      /^Invalid weekly\.txt: is UTF-16LE text .*iconv -f UTF-16 -t UTF-8 weekly\.txt/,
    );
  });

  it('refuses Latin-1 in a later chunk, naming its line', async () => {
    const error = await linesOf([Buffer.from('a.example.com\nb.example.com\n'), latin1('bücher.de\n')]).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).reason).toMatch(/^is not UTF-8: line 3 has the byte 0xFC/);
  });
});

describe('a watchlist', () => {
  const options = { identityKey: 'k'.repeat(32), maxEmails: 5, fileName: 'people.csv' };

  it('in UTF-16 is refused naming the encoding and the conversion', () => {
    expect(() => parseWatchlist(utf16le('name,email\nJane,jane@example.com\n'), 'csv', options)).toThrow(
      /^Invalid watchlist: is UTF-16LE text .*iconv -f UTF-16 -t UTF-8 people\.csv > people\.utf8\.csv$/,
    );
  });
});

describe('npm start', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'text-encoding-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['scan --domains-file', 'list.txt', latin1('a.example.com\nbücher.de\n'), /line 2 has the byte 0xFC/],
    ['breach --watchlist', 'people.csv', utf16le('name,email\nJane,jane@example.com\n'), /is UTF-16LE text/],
  ])(
    '%s refuses a file that is not UTF-8 once, before any work (exit 1)',
    async (command, name, bytes, reason) => {
      const file = join(dir, name);
      await writeFile(file, bytes);
      const out = join(dir, 'out');
      const [verb, flag] = command.split(' ') as [string, string];

      const run = await runCli([verb, flag, file, '--out', out]);

      expect(run).toExitWith(1);
      expect(run.stderr).toMatch(new RegExp(`^error: Invalid ${flag} ${file}: `));
      expect(run.stderr).toMatch(reason);
      expect(run.stderr).toContain(`iconv -f `);
      expect(run.stderr.split('\n')).toHaveLength(2);
      expect(await filesUnder(out).catch(() => [])).toEqual([]);
    },
  );
});

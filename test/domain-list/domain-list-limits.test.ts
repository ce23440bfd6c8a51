/** Domain list parsing: invalid lines and limits, the iterable entry point, and streamed input. */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  linesFromStream,
  parseDomainList,
  parseDomainListText,
  splitLines,
} from '#lambdas/domain-list/domain-list';
import { InvalidInputError } from '#lambdas/platform/errors';
import { expectAccounted } from './domain-list-checks.ts';

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

describe('parseDomainListText', () => {
  it('reports invalid lines with their line number and reason, and keeps the valid ones', () => {
    // Prepare
    const text = [
      'good-one.com',
      '10.0.0.1',
      '*.example.com',
      'localhost',
      'good-two.com',
      'exa_mple.com',
      'example.com/path',
    ].join('\n');

    // Act
    const parsed = parseDomainListText(text);

    // Assess
    expect(parsed.domains.map((d) => d.domain)).toEqual(['good-one.com', 'good-two.com']);
    expect(parsed.invalid).toEqual([
      { line: 2, reason: 'is an IP address', text: '10.0.0.1' },
      { line: 3, reason: 'contains a wildcard', text: '*.example.com' },
      { line: 4, reason: expect.stringContaining('single-label'), text: 'localhost' },
      { line: 6, reason: 'contains an underscore', text: 'exa_mple.com' },
      { line: 7, reason: expect.stringContaining('contains a path'), text: 'example.com/path' },
    ]);
    expectAccounted(parsed);
  });

  it('truncates the raw text of an invalid line to 200 characters', () => {
    // Prepare
    const long = `${'x'.repeat(300)} y`;

    // Act
    const parsed = parseDomainListText(long);

    // Assess
    expect(parsed.invalid[0]?.text).toBe('x'.repeat(200));
  });

  it('does not cut a surrogate pair in half when truncating', () => {
    // Prepare: a 4-byte emoji straddles the 200th UTF-16 unit.
    const line = `${'x'.repeat(199)}😀 tail`;

    // Act
    const text = parseDomainListText(line).invalid[0]?.text ?? '';

    // Assess
    expect(text).toBe('x'.repeat(199));
  });

  it('reports new domains past maxDomains as invalid, but still spots duplicates', () => {
    // Prepare
    const text = 'a.com\nb.com\nc.com\na.com\nd.com\n';

    // Act
    const parsed = parseDomainListText(text, { maxDomains: 2 });

    // Assess
    expect(parsed.domains.map((d) => d.domain)).toEqual(['a.com', 'b.com']);
    expect(parsed.invalid).toEqual([
      { line: 3, reason: 'list exceeds 2 domains', text: 'c.com' },
      { line: 5, reason: 'list exceeds 2 domains', text: 'd.com' },
    ]);
    expect(parsed.duplicates).toEqual([{ line: 4, domain: 'a.com', firstLine: 1 }]);
    expectAccounted(parsed);
  });

  it('uses 100000 as the default maxDomains', () => {
    // Prepare
    const lines = Array.from({ length: 100_001 }, (_, i) => `host${i}.example.com`);

    // Act
    const parsed = parseDomainListText(lines.join('\n'));

    // Assess
    expect(parsed.domains).toHaveLength(100_000);
    expect(parsed.invalid).toEqual([
      { line: 100_001, reason: 'list exceeds 100000 domains', text: 'host100000.example.com' },
    ]);
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects maxDomains %s', (maxDomains) => {
    // Act
    const act = () => parseDomainListText('a.com', { maxDomains });

    // Assess
    expect(act).toThrow(InvalidInputError);
    expect(act).toThrow('maxDomains');
  });

  it('returns zero counts for an empty list', () => {
    expect(parseDomainListText('')).toEqual({
      domains: [],
      invalid: [],
      invalidCount: 0,
      duplicates: [],
      duplicateCount: 0,
      lines: 0,
      ignored: 0,
    });
  });

  it('parses 100,000 lines with junk, duplicates and comments and accounts for every line', () => {
    // Prepare: 95,000 unique domains (plain, URL, upper-case, IDN and CSV forms) with one extra line
    // after every 19th: 2,000 duplicates in another spelling, 2,000 junk lines, 1,000 comments/blanks.
    const valid = (i: number): string => {
      if (i % 10 === 0) return `https://Host${i}.Example.com/path?q=${i}`;
      if (i % 10 === 1) return `bücher${i}.de`;
      if (i % 10 === 2) return `"host${i}.example.net",owner${i}`;
      return `host${i}.example.org`;
    };
    const junk = ['10.0.0.1', '*.wild.com', 'not a domain', 'localhost', 'exa_mple.com', 'x.com/path'];
    const extras = [
      ...Array.from({ length: 2_000 }, (_, k) => `HOST${k * 10 + 5}.EXAMPLE.ORG.`),
      ...Array.from({ length: 2_000 }, (_, k) => junk[k % junk.length] ?? ''),
      ...Array.from({ length: 1_000 }, (_, k) => (k % 2 === 0 ? '# comment' : '   ')),
    ];
    const lines: string[] = [];
    let next = 0;
    for (let i = 0; i < 95_000; i += 1) {
      lines.push(valid(i));
      if (i % 19 === 18 && next < extras.length) lines.push(extras[next++] ?? '');
    }
    const text = lines.join('\n');

    // Act
    const parsed = parseDomainListText(text);

    // Assess
    expect(parsed.lines).toBe(100_000);
    expect(parsed.domains).toHaveLength(95_000);
    // Every line counted; the first 1,000 of each kind kept as examples with line and reason.
    expect(parsed.duplicateCount).toBe(2_000);
    expect(parsed.invalidCount).toBe(2_000);
    expect(parsed.duplicates).toHaveLength(1_000);
    expect(parsed.invalid).toHaveLength(1_000);
    expect(parsed.ignored).toBe(1_000);
    expectAccounted(parsed);
    expect(new Set(parsed.domains.map((d) => d.domain)).size).toBe(95_000);
    expect(parsed.domains[0]).toEqual({ domain: 'host0.example.com', line: 1 });
    expect(parsed.duplicates[0]).toEqual({
      line: 20,
      domain: 'host5.example.org',
      firstLine: 6,
      text: 'HOST5.EXAMPLE.ORG.',
    });
    // Its speed is measured by `npm run bench -- scale` (PrepareDomainList at 100,000 lines), not
    // here: a timed test fails on a loaded machine and proves nothing on an idle one.
  });
});

describe('parseDomainList', () => {
  it('accepts an async iterable and agrees with the text parser', async () => {
    // Prepare
    const text = 'domain,owner\nexample.com,a\n# c\nbad domain\nEXAMPLE.com\n';
    async function* lines() {
      for (const line of splitLines(text)) yield line;
    }

    // Act
    const parsed = await parseDomainList(lines(), { fileName: 'lists/a.csv' });

    // Assess
    expect(parsed).toEqual(parseDomainListText(text));
    expectAccounted(parsed);
  });

  it('accepts a plain array and tolerates a trailing CR on each line', async () => {
    const parsed = await parseDomainList(['\uFEFFexample.com\r', 'example.net\r']);
    expect(parsed.domains.map((d) => d.domain)).toEqual(['example.com', 'example.net']);
  });

  it('refuses a bare string, which would otherwise be read one character per line', async () => {
    // Act
    const act = parseDomainList('example.com' as unknown as string[], { fileName: 'incoming/x.txt' });

    // Assess
    await expect(act).rejects.toThrow(InvalidInputError);
    await expect(act).rejects.toThrow('incoming/x.txt');
  });

  it('parses a byte stream end to end through linesFromStream', async () => {
    // Prepare
    const body = Buffer.from('\uFEFFexample.com\r\nbücher.de\r\n# c\r\n127.0.0.1\r\n', 'utf8');
    const stream = Readable.from([body.subarray(0, 5), body.subarray(5, 17), body.subarray(17)]);

    // Act
    const parsed = await parseDomainList(linesFromStream(stream));

    // Assess
    expect(parsed.domains.map((d) => d.domain)).toEqual(['example.com', 'xn--bcher-kva.de']);
    expect(parsed.invalid).toEqual([{ line: 4, reason: 'is an IP address', text: '127.0.0.1' }]);
    expect(parsed).toMatchObject({ lines: 4, ignored: 1 });
  });
});

describe('linesFromStream', () => {
  const text = '\uFEFFfirst.com\r\nsecond.com\nthird.com\rfourth bücher.de\r\n\r\nlast.com';
  const expected = ['first.com', 'second.com', 'third.com', 'fourth bücher.de', '', 'last.com'];

  it.each([1, 2, 3, 5, 7, 64])('splits the same lines whatever the chunk size (%i bytes)', async (size) => {
    // Prepare: byte chunks split CRLF pairs and the two bytes of 'ü' at every possible offset.
    const bytes = Buffer.from(text, 'utf8');
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));

    // Act
    const lines = await collect(linesFromStream(Readable.from(chunks)));

    // Assess
    expect(lines).toEqual(expected);
  });

  it('accepts string chunks and strips a BOM from them too', async () => {
    const lines = await collect(linesFromStream(Readable.from(['\uFEFFa.com\r', '\nb.com\n'])));
    expect(lines).toEqual(['a.com', 'b.com']);
  });

  it('does not yield an extra empty line after a final newline, nor any line for an empty stream', async () => {
    expect(await collect(linesFromStream(Readable.from([Buffer.from('a.com\n')])))).toEqual(['a.com']);
    expect(await collect(linesFromStream(Readable.from([])))).toEqual([]);
  });

  it('cuts an over-long line at maxLineLength and carries on with the next line', async () => {
    // Prepare
    const chunks = [
      Buffer.from('ok.com\n'),
      Buffer.from('x'.repeat(50)),
      Buffer.from('x'.repeat(50)),
      Buffer.from('\nafter.com'),
    ];

    // Act
    const lines = await collect(linesFromStream(Readable.from(chunks), { maxLineLength: 20 }));

    // Assess
    expect(lines).toEqual(['ok.com', 'x'.repeat(20), 'after.com']);
  });

  it('counts lines exactly as splitLines does for a large stream', async () => {
    // Prepare
    const big = Array.from({ length: 20_000 }, (_, i) => (i % 3 === 0 ? `h${i}.com\r` : `h${i}.com`)).join(
      '\n',
    );
    const bytes = Buffer.from(big, 'utf8');
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += 65_536) chunks.push(bytes.subarray(i, i + 65_536));

    // Act
    const lines = await collect(linesFromStream(Readable.from(chunks)));

    // Assess
    expect(lines).toEqual(splitLines(big));
  });
});

/** Domain list parsing: line splitting, and the text parser on well-formed input of every format (lines, CSV, URLs, IDNs). */

import { describe, expect, it } from 'vitest';
import { parseDomainListText, splitLines } from '#lambdas/domain-list/domain-list';
import { expectAccounted } from './domain-list-checks.ts';

describe('splitLines', () => {
  it.each([
    ['empty text', '', []],
    ['one line without newline', 'a', ['a']],
    ['LF endings with a final newline', 'a\nb\n', ['a', 'b']],
    ['CRLF endings', 'a\r\nb\r\n', ['a', 'b']],
    ['lone CR endings', 'a\rb\r', ['a', 'b']],
    ['mixed endings', 'a\r\nb\nc\rd', ['a', 'b', 'c', 'd']],
    ['blank lines in the middle', 'a\n\n\nb', ['a', '', '', 'b']],
    ['only a newline', '\n', ['']],
    ['a BOM', '\uFEFFa\nb', ['a', 'b']],
  ])('splits %s', (_case, text, expected) => {
    expect(splitLines(text)).toEqual(expected);
  });
});

describe('parseDomainListText', () => {
  it('reads one domain per line, normalised, with 1-based line numbers', () => {
    // Prepare
    const text = 'example.com\nExample.ORG\nbücher.de\n';

    // Act
    const parsed = parseDomainListText(text);

    // Assess
    expect(parsed.domains).toEqual([
      { domain: 'example.com', line: 1 },
      { domain: 'example.org', line: 2 },
      { domain: 'xn--bcher-kva.de', line: 3 },
    ]);
    expect(parsed).toMatchObject({ invalid: [], duplicates: [], lines: 3, ignored: 0 });
  });

  it('ignores blank lines and # comments, and strips trailing comments and whitespace', () => {
    // Prepare
    const text = [
      '# team A domains',
      '',
      '   ',
      '  example.com   # primary site',
      '\texample.net\t',
      '   # indented comment',
      'example.org#not-a-comment',
    ].join('\n');

    // Act
    const parsed = parseDomainListText(text);

    // Assess
    expect(parsed.domains).toEqual([
      { domain: 'example.com', line: 4 },
      { domain: 'example.net', line: 5 },
    ]);
    expect(parsed.ignored).toBe(4);
    expect(parsed.invalid).toEqual([
      { line: 7, reason: expect.stringContaining('contains a fragment'), text: 'example.org#not-a-comment' },
    ]);
    expectAccounted(parsed);
  });

  it('handles a UTF-8 BOM and CRLF line endings', () => {
    // Prepare
    const text = '\uFEFFexample.com\r\nexample.net\r\n\r\nnot valid\r\n';

    // Act
    const parsed = parseDomainListText(text);

    // Assess
    expect(parsed.domains.map((d) => d.domain)).toEqual(['example.com', 'example.net']);
    expect(parsed.invalid).toEqual([{ line: 4, reason: 'contains a space', text: 'not valid' }]);
    expect(parsed.lines).toBe(4);
    expectAccounted(parsed);
  });

  it('takes the first CSV column, with quotes and a header row', () => {
    // Prepare
    const text = [
      'Domain,Owner,Notes',
      'example.com,alice,"prod, EU"',
      '"example.net",bob',
      '"https://example.org/login","carol"',
      ' "quoted""odd.com" ,x',
      '"unterminated.com,foo',
      '"example.io" trailing,foo',
      ',no first column',
    ].join('\n');

    // Act
    const parsed = parseDomainListText(text);

    // Assess
    expect(parsed.domains).toEqual([
      { domain: 'example.com', line: 2 },
      { domain: 'example.net', line: 3 },
      { domain: 'example.org', line: 4 },
    ]);
    expect(parsed.ignored).toBe(1);
    expect(parsed.invalid.map(({ line, reason }) => ({ line, reason }))).toEqual([
      { line: 5, reason: expect.stringContaining('contains "\\""') },
      { line: 6, reason: 'has an unterminated quoted field' },
      { line: 7, reason: 'has text after a quoted field' },
      { line: 8, reason: 'first column is empty' },
    ]);
    expectAccounted(parsed);
  });

  it.each(['domain', 'DOMAINS', 'Hostname', 'host', 'URL', '"domain"'])(
    'treats a first row whose first column is %s as a header',
    (header) => {
      const parsed = parseDomainListText(`${header},owner\nexample.com,alice`);
      expect(parsed).toMatchObject({
        ignored: 1,
        invalid: [],
        domains: [{ domain: 'example.com', line: 2 }],
      });
    },
  );

  it.each(['Domain Name', 'domain_name', 'Host-Name', 'FQDN', 'Website', '"Domain Name"'])(
    'recognises the export header %s and names it as the header row, not as an invalid line',
    (header) => {
      // Act
      const parsed = parseDomainListText(`# export\n${header},Owner\nexample.com,alice`);

      // Assess
      expect(parsed.header).toEqual({ line: 2, text: `${header},Owner` });
      expect(parsed).toMatchObject({
        ignored: 2,
        invalid: [],
        domains: [{ domain: 'example.com', line: 3 }],
      });
      expectAccounted(parsed);
    },
  );

  it('recognises a header after leading comments, but not on a later row', () => {
    // Prepare
    const text = '# exported 2026-11-02\ndomain\nexample.com\ndomain\n';

    // Act
    const parsed = parseDomainListText(text);

    // Assess
    expect(parsed.ignored).toBe(2);
    expect(parsed.invalid).toEqual([
      { line: 4, reason: expect.stringContaining('single-label'), text: 'domain' },
    ]);
    expectAccounted(parsed);
  });

  it('accepts URL and IDN lines and removes duplicates after normalisation', () => {
    // Prepare
    const text = [
      'Example.com',
      'https://example.com/',
      'EXAMPLE.COM.',
      'http://EXAMPLE.com:8080/path?q=1',
      'bücher.de',
      'xn--bcher-kva.de',
      'https://BÜCHER.de/x',
    ].join('\n');

    // Act
    const parsed = parseDomainListText(text);

    // Assess
    expect(parsed.domains).toEqual([
      { domain: 'example.com', line: 1 },
      { domain: 'xn--bcher-kva.de', line: 5 },
    ]);
    expect(parsed.duplicates).toEqual([
      { line: 2, domain: 'example.com', firstLine: 1, text: 'https://example.com/' },
      { line: 3, domain: 'example.com', firstLine: 1, text: 'EXAMPLE.COM.' },
      { line: 4, domain: 'example.com', firstLine: 1, text: 'http://EXAMPLE.com:8080/path?q=1' },
      // Typed as the domain is stored: nothing to add.
      { line: 6, domain: 'xn--bcher-kva.de', firstLine: 5 },
      { line: 7, domain: 'xn--bcher-kva.de', firstLine: 5, text: 'https://BÜCHER.de/x' },
    ]);
    expectAccounted(parsed);
  });
});

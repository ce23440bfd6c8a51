/** Watchlist parsing: every row accounted for, junk never stopping the valid rows, no address quoted. */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#lambdas/platform/errors';
import { parseWatchlist, watchlistFormatOf } from '#lambdas/watchlist/watchlist';

const OPTIONS = { identityKey: 'k'.repeat(40), maxEmails: 50 };
const csv = (text: string) => parseWatchlist(Buffer.from(text), 'csv', OPTIONS);

describe('CSV watchlists', () => {
  it('reads a person per line: quoted names, several addresses per cell, a header, comments and blanks', () => {
    const parsed = csv(
      'Name,Emails\r\n# comment\r\n"Doe, Jane",jane@example.com;j@example.net\r\n\r\nJohn,john@example.com,jr@example.com\r\n',
    );

    expect(parsed.headerRow).toBe(1);
    expect(parsed.ignoredLines).toBe(2);
    expect(parsed.people.map((p) => [p.row, p.request.name, p.request.emails])).toEqual([
      [3, 'Doe, Jane', ['jane@example.com', 'j@example.net']],
      [5, 'John', ['john@example.com', 'jr@example.com']],
    ]);
  });

  it('takes the first row as a person when it is not a header', () => {
    expect(csv('Jane,jane@example.com\n').people).toHaveLength(1);
  });

  it('strips a byte-order mark', () => {
    expect(csv('\uFEFFname,email\nJane,jane@example.com\n').headerRow).toBe(1);
  });

  it('keeps a broken quote to its own line', () => {
    const parsed = csv('"Broken,a@example.com\nJane,jane@example.com\n');

    expect(parsed.rejected).toEqual([
      { row: 1, status: 'invalid', reason: 'is not a readable CSV row (check its quotes)' },
    ]);
    expect(parsed.people.map((p) => p.row)).toEqual([2]);
  });

  it('marks a second row of the same person, in any order and case, as a duplicate', () => {
    const parsed = csv('Jane,a@example.com,b@example.com\njane,B@example.com,a@EXAMPLE.com\n');

    expect(parsed.rejected).toEqual([{ row: 2, status: 'duplicate', reason: 'the same person as row 1' }]);
  });

  it('refuses rows beyond the row limit, each accounted for', () => {
    const lines = Array.from({ length: 5 }, (_, i) => `P${i},p${i}@example.com`).join('\n');

    const parsed = parseWatchlist(Buffer.from(lines), 'csv', { ...OPTIONS, maxRows: 3 });

    expect(parsed.people).toHaveLength(3);
    expect(parsed.rejected.map((r) => [r.row, r.reason])).toEqual([
      [4, 'over the limit of 3 people per watchlist'],
      [5, 'over the limit of 3 people per watchlist'],
    ]);
  });

  it('never quotes an address in a reason', () => {
    const parsed = csv('Jane,jane@@example.com\nJohn,john doe@example.com\n');

    expect(parsed.rejected).toHaveLength(2);
    expect(JSON.stringify(parsed.rejected)).not.toMatch(/jane@@|john doe/);
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(() => parseWatchlist(Buffer.from([0x4a, 0xff, 0xfe, 0x0a]), 'csv', OPTIONS)).toThrow(
      InvalidInputError,
    );
  });
});

describe('JSON watchlists', () => {
  it('reads an array or a {people} object; each entry is a row', () => {
    const people = [{ name: 'Jane', emails: ['jane@example.com'] }, { name: 'John' }];
    for (const body of [people, { people }]) {
      const parsed = parseWatchlist(Buffer.from(JSON.stringify(body)), 'json', OPTIONS);
      expect(parsed.people.map((p) => p.row)).toEqual([1]);
      expect(parsed.rejected).toEqual([{ row: 2, status: 'invalid', reason: 'emails: is missing' }]);
    }
  });

  it.each([
    ['not JSON', '{"people": [', /is not valid JSON/],
    ['a bare object', '{"name":"Jane"}', /must be a JSON array of people/],
    ['a string', '"jane@example.com"', /must be a JSON array of people/],
  ])('refuses %s as a whole, without quoting it', (_label, body, message) => {
    const error = (() => {
      try {
        parseWatchlist(Buffer.from(body), 'json', OPTIONS);
      } catch (caught) {
        return caught as Error;
      }
      throw new Error('expected an error');
    })();
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('jane@');
  });
});

it.each([
  ['lists/vip.csv', 'csv'],
  ['VIP.JSON', 'json'],
  ['vip.txt', undefined],
])('knows %s as %s', (key, format) => {
  expect(watchlistFormatOf(key)).toBe(format);
});

/**
 * Watchlists: the people a watchlist run reports on, from CSV or JSON. Every row is accounted
 * for: valid, invalid (with a reason that names the field by position, never quoting an address)
 * or a duplicate of an earlier row. An invalid row never stops the valid ones.
 *
 * CSV: one person per row, the name first, then their addresses, one per cell (a cell may also
 * hold several, separated by `;`). A first row whose first cell is `name` is a header. `#` starts
 * a comment line; blank lines are skipped. JSON: `[{ "name", "emails": [...] }]` or
 * `{ "people": [...] }`.
 */
import { parse } from 'csv-parse/sync';
import { personRef } from '#lambdas/breach/contracts';
import { InvalidInputError } from '#lambdas/platform/errors';
import { notUtf8Reason } from '#lambdas/platform/input/text-encoding';
import { parseJsonBody } from '#lambdas/vendor-api/transport/json';
import { DEFAULT_MAX_WATCHLIST_ROWS, type WatchlistFormat } from '#lambdas/watchlist/watchlist-format';
import { type BreachRequest, type PersonRef, parseBreachRequest } from '../breach/contracts.ts';

export {
  DEFAULT_MAX_WATCHLIST_BYTES,
  DEFAULT_MAX_WATCHLIST_ROWS,
  WATCHLIST_LIMITS,
  WATCHLIST_SUFFIXES,
  type WatchlistFormat,
  watchlistFormatOf,
} from '#lambdas/watchlist/watchlist-format';

export interface WatchlistPerson {
  /** 1-based: the CSV record's line, or the JSON entry's position. */
  readonly row: number;
  readonly request: BreachRequest;
  readonly person: PersonRef;
}

export interface WatchlistRejection {
  readonly row: number;
  readonly status: 'invalid' | 'duplicate';
  readonly reason: string;
}

export interface ParsedWatchlist {
  readonly format: WatchlistFormat;
  readonly people: readonly WatchlistPerson[];
  readonly rejected: readonly WatchlistRejection[];
  /** The header row, when the CSV had one. */
  readonly headerRow: number | undefined;
  /** Rows read (header, blank and comment lines excluded). */
  readonly rows: number;
  /** Blank and `#` comment lines of a CSV. */
  readonly ignoredLines: number;
}

export interface WatchlistOptions {
  readonly identityKey: string;
  readonly maxEmails: number;
  /** @default DEFAULT_MAX_WATCHLIST_ROWS */
  readonly maxRows?: number;
  /** The file's name, for the hint on converting a file that is not UTF-8. @default `watchlist.<format>` */
  readonly fileName?: string;
}

export function parseWatchlist(
  bytes: Uint8Array,
  format: WatchlistFormat,
  options: WatchlistOptions,
): ParsedWatchlist {
  const text = decodeUtf8(bytes, options.fileName ?? `watchlist.${format}`);
  const { rows, headerRow, ignored } = format === 'csv' ? csvRows(text) : jsonRows(text);
  const maxRows = options.maxRows ?? DEFAULT_MAX_WATCHLIST_ROWS;
  const people: WatchlistPerson[] = [];
  const rejected: WatchlistRejection[] = [];
  const firstRowOf = new Map<string, number>();
  let accepted = 0;
  for (const { row, value, problem } of rows) {
    if (problem !== undefined) {
      rejected.push({ row, status: 'invalid', reason: problem });
      continue;
    }
    let request: BreachRequest;
    try {
      request = parseBreachRequest(value, { maxEmails: options.maxEmails, root: '' });
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      rejected.push({ row, status: 'invalid', reason: `${error.input}: ${error.reason}` });
      continue;
    }
    const person = personRef(options.identityKey, request);
    const first = firstRowOf.get(person.id);
    if (first !== undefined) {
      rejected.push({ row, status: 'duplicate', reason: `the same person as row ${first}` });
      continue;
    }
    if (accepted >= maxRows) {
      rejected.push({ row, status: 'invalid', reason: `over the limit of ${maxRows} people per watchlist` });
      continue;
    }
    firstRowOf.set(person.id, row);
    accepted += 1;
    people.push({ row, request, person });
  }
  return { format, people, rejected, headerRow, rows: rows.length, ignoredLines: ignored };
}

interface RawRow {
  readonly row: number;
  readonly value: unknown;
  /** Set when the row could not even be read as a person. */
  readonly problem?: string;
}

/**
 * CSV, one physical line per row: a person's name and addresses never span lines, and reading
 * line by line keeps a broken quote on one line from swallowing the rows after it.
 */
function csvRows(text: string): { rows: RawRow[]; headerRow: number | undefined; ignored: number } {
  const rows: RawRow[] = [];
  let headerRow: number | undefined;
  let ignored = 0;
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  if (lines.at(-1) === '') lines.pop();
  for (const [index, line] of lines.entries()) {
    const row = index + 1;
    if (line.trim() === '' || line.trimStart().startsWith('#')) {
      ignored += 1;
      continue;
    }
    let cells: string[];
    try {
      // One line at a time (a bad row is only that row); its delimiter named, not discovered per line.
      cells =
        (parse(line, { relax_column_count: true, trim: true, record_delimiter: '\n' }) as string[][])[0] ??
        [];
    } catch {
      rows.push({ row, value: undefined, problem: 'is not a readable CSV row (check its quotes)' });
      continue;
    }
    const [name = '', ...rest] = cells;
    if (rows.length === 0 && headerRow === undefined && /^(name|person|full[ _-]?name)$/i.test(name)) {
      headerRow = row;
      continue;
    }
    const emails = rest
      .flatMap((cell) => cell.split(';'))
      .map((email) => email.trim())
      .filter(Boolean);
    rows.push({ row, value: { name, emails } });
  }
  return { rows, headerRow, ignored };
}

function jsonRows(text: string): { rows: RawRow[]; headerRow: undefined; ignored: 0 } {
  const parsed = parseJsonBody(text);
  // The parser's message would quote the text, which holds addresses.
  if (!parsed.ok) throw new InvalidInputError('watchlist', 'is not valid JSON');
  const value = parsed.value;
  const list = Array.isArray(value)
    ? value
    : value !== null && typeof value === 'object' && Array.isArray((value as { people?: unknown }).people)
      ? (value as { people: unknown[] }).people
      : undefined;
  if (list === undefined) {
    throw new InvalidInputError(
      'watchlist',
      'must be a JSON array of people, or an object with a "people" array',
    );
  }
  return {
    rows: list.map((entry, index) => ({ row: index + 1, value: entry })),
    headerRow: undefined,
    ignored: 0,
  };
}

/** The text, or the watchlist refused once, naming its encoding and how to convert it. */
function decodeUtf8(bytes: Uint8Array, file: string): string {
  const problem = notUtf8Reason(bytes, { file });
  if (problem) throw new InvalidInputError('watchlist', problem);
  return new TextDecoder('utf-8').decode(bytes);
}

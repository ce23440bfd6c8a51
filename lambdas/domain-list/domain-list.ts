/**
 * Parses an uploaded domain list: one domain (or URL) per line, or a CSV whose first column holds it.
 *
 * Every input line ends up in exactly one bucket (domains, invalid, duplicates, ignored) so the list
 * summary can account for all of them, and a bad line never stops the good ones.
 */

import type { DuplicateLine, InvalidLine } from '#lambdas/domain-list/contracts';
import { DOMAIN_LIST_VARIABLES } from '#lambdas/domain-list/variables';
import { InvalidInputError } from '#lambdas/platform/errors';
import { notUtf8Reason } from '#lambdas/platform/input/text-encoding';
import { checkDomainName } from '#lambdas/platform/input/validation';
import { redactText } from '#lambdas/platform/redaction/redact';

export const DEFAULT_MAX_DOMAINS = 100_000;

/** Lists are text: 20 MiB is about a million domains, far above `maxDomains`. */
export const DEFAULT_MAX_LIST_BYTES = 20 * 1024 * 1024;

/**
 * The list size limit, written once: the configuration (`intake.maxListBytes`), the variable the
 * prepare step reads, and its bounds. Up to 100 MiB: parsing streams, but every line costs CPU
 * time inside the step's timeout.
 */
export const LIST_SIZE_LIMIT = {
  variable: DOMAIN_LIST_VARIABLES.maxBytes,
  bounds: { min: 1024, max: 100 * 1024 * 1024, integer: true },
  default: DEFAULT_MAX_LIST_BYTES,
} as const;

/** The intake's suffix rule, which every object intake shares, under the name the list's users know. */
export { INTAKE_SUFFIX_PATTERN as DOMAIN_LIST_SUFFIX_PATTERN } from '#lambdas/platform/runs/intake-suffixes';
/** The suffixes that mark a domain list when none are configured (`intake.suffixes`). */
export const DEFAULT_DOMAIN_LIST_SUFFIXES: readonly string[] = Object.freeze(['.txt', '.csv']);
/** Longest raw line kept by `linesFromStream`; the rest of an over-long line is dropped (it is invalid anyway). */
export const DEFAULT_MAX_LINE_LENGTH = 64 * 1024;
const MAX_INVALID_TEXT = 200;
/**
 * First-column names that mark a CSV header row, compared case-insensitively with spaces, `_` and
 * `-` removed, so the headers spreadsheets and registrar exports write (`Domain Name`, `domain_name`,
 * `Host-Name`, `FQDN`, `Website`) are recognised. Each is a single label, which is never a valid
 * domain, so a real domain can never be taken for a header.
 */
const HEADER_NAMES = new Set([
  'domain',
  'domains',
  'domainname',
  'hostname',
  'host',
  'url',
  'urls',
  'website',
  'site',
  'fqdn',
  'name',
]);
const BOM = '\uFEFF';
// A '#' that starts a trailing comment must follow whitespace, so "https://example.com/#top" stays a URL.
const TRAILING_COMMENT = /\s#/;

export interface DomainListOptions {
  /** Names the list in errors about the list as a whole, e.g. `incoming/team-a.txt`. */
  readonly fileName?: string;
  /** New domains past this count are reported invalid. @default 100000 */
  readonly maxDomains?: number;
  /**
   * Invalid and duplicate lines are counted in full but kept only up to this many each (the first
   * ones, with line numbers and reasons): a 50 MB file of junk must not become gigabytes of heap.
   * @default DEFAULT_MAX_SAMPLES
   */
  readonly maxSamples?: number;
  /** Special-use suffixes accepted anyway (`scan.allowSpecialUseDomains`). @default [] */
  readonly allowSpecialUse?: readonly string[];
}

/** How many invalid (and duplicate) lines a parse keeps as examples. */
export const DEFAULT_MAX_SAMPLES = 1_000;

export interface ParsedDomainList {
  /** Unique normalised domains in input order, each with the 1-based line it first appeared on. */
  readonly domains: { readonly domain: string; readonly line: number }[];
  /** The first `maxSamples` invalid lines; `invalidCount` counts them all. */
  readonly invalid: InvalidLine[];
  readonly invalidCount: number;
  /** The first `maxSamples` duplicate lines; `duplicateCount` counts them all. */
  readonly duplicates: DuplicateLine[];
  readonly duplicateCount: number;
  /** Lines read. Always `domains.length + invalidCount + duplicateCount + ignored`. */
  readonly lines: number;
  /** Blank lines, comment lines and a CSV header row (which `header` also names). */
  readonly ignored: number;
  /** The CSV header row, when the first line with content is one. */
  readonly header?: HeaderLine;
}

/** A recognised CSV header row: where it was and its text (truncated to 200 characters). */
export interface HeaderLine {
  readonly line: number;
  readonly text: string;
}

/** True for a first column that names the domain column of a CSV export. */
export function isHeaderName(column: string): boolean {
  return HEADER_NAMES.has(column.toLowerCase().replace(/[\s_-]+/g, ''));
}

/**
 * Parses lines from an array, a generator or an async source such as `linesFromStream(body)`.
 * Lines must not contain their line terminators (a trailing '\r' is tolerated).
 */
export async function parseDomainList(
  lines: Iterable<string> | AsyncIterable<string>,
  options: DomainListOptions = {},
): Promise<ParsedDomainList> {
  if (typeof lines === 'string') {
    // A string is iterable too, one character at a time: almost certainly a caller mistake.
    throw new InvalidInputError(options.fileName ?? 'domain list', 'is a string; use parseDomainListText');
  }
  const parser = new DomainListParser(options);
  if (isAsyncIterable(lines)) {
    for await (const line of lines) parser.push(line);
  } else if (isIterable(lines)) {
    for (const line of lines) parser.push(line);
  } else {
    throw new InvalidInputError(options.fileName ?? 'domain list', 'is not a list of lines');
  }
  return parser.result();
}

/** Synchronous variant for a list already in memory (a CLI argument file, an inline list, tests). */
export function parseDomainListText(text: string, options: DomainListOptions = {}): ParsedDomainList {
  if (typeof text !== 'string') throw new InvalidInputError(options.fileName ?? 'domain list', 'is not text');
  const parser = new DomainListParser(options);
  for (const line of splitLines(text)) parser.push(line);
  return parser.result();
}

/**
 * Splits text on CRLF, LF or a lone CR and drops a leading BOM. A final line terminator does not start
 * another line, so line numbers match what an editor shows.
 */
export function splitLines(text: string): string[] {
  return splitRaw(text.startsWith(BOM) ? text.slice(1) : text);
}

function splitRaw(text: string): string[] {
  let body = text;
  if (body === '') return [];
  if (body.endsWith('\r\n')) body = body.slice(0, -2);
  else if (body.endsWith('\n') || body.endsWith('\r')) body = body.slice(0, -1);
  return body.split(/\r\n|\n|\r/);
}

/**
 * Turns a byte stream (a Node Readable, an S3 `GetObject` body, any async iterable of chunks) into lines,
 * decoding UTF-8 incrementally so a multi-byte character split across chunks survives. Handles a BOM and
 * CRLF/LF/CR endings, including a CRLF split across two chunks. Memory stays bounded by the longest line,
 * which is cut at `maxLineLength` characters.
 */
export async function* linesFromStream(
  stream: AsyncIterable<Uint8Array | string>,
  options: { readonly maxLineLength?: number; readonly fileName?: string } = {},
): AsyncGenerator<string, void, undefined> {
  const maxLineLength = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
  const file = options.fileName ?? 'domain list';
  // Bytes that are not UTF-8 refuse the list once, naming the encoding (text-encoding.ts), rather
  // than a replacement character and a bad label on every line.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytesSeen = false;
  let linesBefore = 0;
  const decode = (chunk: Uint8Array, final: boolean): string => {
    const atStart = !bytesSeen;
    bytesSeen = true;
    const startProblem = atStart ? notUtf8Reason(chunk, { file, partial: !final }) : undefined;
    if (startProblem) throw new InvalidInputError(file, startProblem);
    try {
      return decoder.decode(chunk, { stream: !final });
    } catch {
      // A chunk may open with the rest of a character the previous one began.
      let from = 0;
      while (from < 3 && ((chunk[from] ?? 0) & 0xc0) === 0x80) from += 1;
      throw new InvalidInputError(
        file,
        notUtf8Reason(chunk.subarray(from), { file, atStart: false, linesBefore, partial: !final }) ??
          'is not UTF-8: it ends in the middle of a character (a cut-off file?)',
      );
    } finally {
      for (const byte of chunk) if (byte === 0x0a) linesBefore += 1;
    }
  };
  let buffer = '';
  let first = true;
  // True while skipping the tail of a line already cut at maxLineLength.
  let skipping = false;

  const take = (line: string): string => {
    if (first) {
      first = false;
      if (line.startsWith(BOM)) return line.slice(1);
    }
    return line;
  };

  for await (const chunk of stream) {
    buffer += typeof chunk === 'string' ? chunk : decode(chunk, false);
    let start = 0;
    const breaks = /[\r\n]/g;
    for (;;) {
      breaks.lastIndex = start;
      const found = breaks.exec(buffer);
      if (!found) break;
      const at = found.index;
      // A CR at the very end may be the first half of a CRLF that the next chunk completes.
      if (buffer[at] === '\r' && at === buffer.length - 1) break;
      if (skipping) skipping = false;
      else yield take(buffer.slice(start, at));
      start = at + (buffer[at] === '\r' && buffer[at + 1] === '\n' ? 2 : 1);
    }
    buffer = buffer.slice(start);
    if (buffer.length > maxLineLength && !buffer.endsWith('\r')) {
      if (!skipping) yield take(buffer.slice(0, maxLineLength));
      skipping = true;
      buffer = '';
    }
  }
  buffer += decode(new Uint8Array(0), true);
  for (const line of splitRaw(buffer)) {
    if (skipping) {
      skipping = false;
      continue;
    }
    yield take(line.length > maxLineLength ? line.slice(0, maxLineLength) : line);
  }
}

/** Incremental parser; `push` each line in order, then read `result()`. */
class DomainListParser {
  private readonly maxDomains: number;
  private readonly maxSamples: number;
  private readonly allowSpecialUse: readonly string[];
  private invalidCount = 0;
  private duplicateCount = 0;
  private readonly domains: { domain: string; line: number }[] = [];
  private readonly invalid: InvalidLine[] = [];
  private readonly duplicates: DuplicateLine[] = [];
  private readonly firstSeen = new Map<string, number>();
  private lineNo = 0;
  private ignored = 0;
  private sawContent = false;
  private header: HeaderLine | undefined;

  constructor(options: DomainListOptions) {
    const max = options.maxDomains ?? DEFAULT_MAX_DOMAINS;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new InvalidInputError('maxDomains', 'must be a positive integer');
    }
    this.maxDomains = max;
    const samples = options.maxSamples ?? DEFAULT_MAX_SAMPLES;
    if (!Number.isSafeInteger(samples) || samples < 0) {
      throw new InvalidInputError('maxSamples', 'must be a whole number >= 0');
    }
    this.maxSamples = samples;
    this.allowSpecialUse = options.allowSpecialUse ?? [];
  }

  push(rawLine: string): void {
    this.lineNo += 1;
    const line = this.lineNo === 1 && rawLine.startsWith(BOM) ? rawLine.slice(1) : rawLine;
    const raw = line.endsWith('\r') ? line.slice(0, -1) : line;

    let content = raw.trim();
    if (content === '' || content.startsWith('#')) {
      this.ignored += 1;
      return;
    }
    const comment = content.search(TRAILING_COMMENT);
    if (comment !== -1) content = content.slice(0, comment).trimEnd();

    const column = firstCsvColumn(content);
    if (typeof column !== 'string') {
      this.reject(raw, column.problem);
      return;
    }
    const isFirstContent = !this.sawContent;
    this.sawContent = true;
    if (isFirstContent && isHeaderName(column)) {
      this.ignored += 1;
      this.header = { line: this.lineNo, text: quoted(raw) };
      return;
    }
    if (column === '') {
      this.reject(raw, 'first column is empty');
      return;
    }

    const domain = checkDomainName(column, { allowSpecialUse: this.allowSpecialUse });
    if (typeof domain !== 'string') {
      this.reject(raw, domain.reason);
      return;
    }

    const firstLine = this.firstSeen.get(domain);
    if (firstLine !== undefined) {
      this.duplicateCount += 1;
      if (this.duplicates.length < this.maxSamples)
        this.duplicates.push({
          line: this.lineNo,
          domain,
          firstLine,
          ...(column === domain ? {} : { text: quoted(column) }),
        });
      return;
    }
    if (this.domains.length >= this.maxDomains) {
      this.reject(raw, `list exceeds ${this.maxDomains} domains`);
      return;
    }
    this.firstSeen.set(domain, this.lineNo);
    this.domains.push({ domain, line: this.lineNo });
  }

  result(): ParsedDomainList {
    return {
      domains: this.domains,
      invalid: this.invalid,
      invalidCount: this.invalidCount,
      duplicates: this.duplicates,
      duplicateCount: this.duplicateCount,
      lines: this.lineNo,
      ignored: this.ignored,
      ...(this.header ? { header: this.header } : {}),
    };
  }

  private reject(raw: string, reason: string): void {
    this.sawContent = true;
    this.invalidCount += 1;
    if (this.invalid.length < this.maxSamples) {
      this.invalid.push({ line: this.lineNo, reason, text: quoted(raw) });
    }
  }
}

/**
 * The first field of a CSV row (RFC 4180 quoting: `"a ""b"""`). A line without a comma or a leading
 * quote is the field itself, so plain lists pay almost nothing for CSV support.
 */
function firstCsvColumn(content: string): string | { problem: string } {
  if (!content.startsWith('"')) {
    const comma = content.indexOf(',');
    return (comma === -1 ? content : content.slice(0, comma)).trim();
  }
  let value = '';
  let index = 1;
  for (;;) {
    const quote = content.indexOf('"', index);
    if (quote === -1) return { problem: 'has an unterminated quoted field' };
    value += content.slice(index, quote);
    if (content[quote + 1] === '"') {
      value += '"';
      index = quote + 2;
      continue;
    }
    const after = content.slice(quote + 1).trimStart();
    if (after !== '' && !after.startsWith(',')) return { problem: 'has text after a quoted field' };
    return value.trim();
  }
}

/**
 * A line as rejects.json, summary.json and summary.txt quote it: redacted first (a line may be
 * `https://user:pass@host/` or an address), then cut.
 */
function quoted(raw: string): string {
  return truncate(redactText(raw), MAX_INVALID_TEXT);
}

/** Cuts at `max` UTF-16 units without leaving half a surrogate pair behind. */
function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<string> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

function isIterable(value: unknown): value is Iterable<string> {
  return typeof (value as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] === 'function';
}

/**
 * `GET /scans` read from its text, one entry at a time, so that the memory it takes is the text
 * and what is kept of it (the readable scans, a count and a bounded sample of the rest), not a
 * parsed object per entry: 16 MiB of `{}` entries, under the 64 MiB cap, is eight million objects
 * when parsed whole, which took reconciliation's 1,024 MB heap.
 *
 * The list is found as `readScanListing` finds it in a parsed answer (a configured path, or the
 * top level, or a common envelope, or one envelope deeper); each entry is parsed alone and read by
 * the same rules. Text that is not JSON is refused by name, as a whole answer would be.
 */
import { VendorJsonLimitError, VendorResponseError } from '#lambdas/platform/errors';
import { JSON_LIMITS, jsonDepthExceeds } from '#lambdas/vendor-api/transport/json';
import {
  LIST_ENVELOPES,
  type ListingPaths,
  readListedScan,
  type ScanListing,
  UnreadableSample,
} from './scan-listing.ts';
import { DEFAULT_STATUS_VOCABULARY } from './status.ts';
import type { StatusVocabulary } from './types.ts';

const OPERATION = 'scan.listScans';

/** Thrown by the scanner at the first byte that cannot continue a JSON value. */
class NotJson extends Error {}

/** Positions in `text`: each function returns where what it read ends. */
class JsonCursor {
  constructor(private readonly text: string) {}

  space(at: number): number {
    let i = at;
    for (; i < this.text.length; i += 1) {
      const c = this.text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    }
    return i;
  }

  char(at: number): string {
    return this.text.charAt(at);
  }

  /** Past the string that starts at `at` (its opening quote). */
  stringEnd(at: number): number {
    if (this.text.charCodeAt(at) !== 0x22) throw new NotJson();
    for (let i = at + 1; i < this.text.length; i += 1) {
      const c = this.text.charCodeAt(i);
      if (c === 0x5c) i += 1;
      else if (c === 0x22) return i + 1;
    }
    throw new NotJson();
  }

  /** Past the value that starts at `at`; its inside is checked only when it is parsed. */
  valueEnd(at: number): number {
    const first = this.text.charCodeAt(at);
    if (first === 0x22) return this.stringEnd(at);
    if (first === 0x7b || first === 0x5b) {
      let depth = 0;
      for (let i = at; i < this.text.length; i += 1) {
        const c = this.text.charCodeAt(i);
        if (c === 0x22) i = this.stringEnd(i) - 1;
        else if (c === 0x7b || c === 0x5b) depth += 1;
        else if (c === 0x7d || c === 0x5d) {
          depth -= 1;
          if (depth === 0) return i + 1;
        }
      }
      throw new NotJson();
    }
    let i = at;
    while (i < this.text.length && !',]}: \n\r\t'.includes(this.text.charAt(i))) i += 1;
    if (i === at) throw new NotJson();
    return i;
  }

  /** The members of the object at `at`: each key (parsed) and where its value starts and ends. */
  *members(at: number): Generator<{ key: string; start: number; end: number }> {
    let i = this.space(at + 1);
    if (this.char(i) === '}') return;
    for (;;) {
      const keyEnd = this.stringEnd(i);
      const key = JSON.parse(this.text.slice(i, keyEnd)) as string;
      i = this.space(keyEnd);
      if (this.char(i) !== ':') throw new NotJson();
      const start = this.space(i + 1);
      const end = this.valueEnd(start);
      yield { key, start, end };
      i = this.space(end);
      if (this.char(i) === '}') return;
      if (this.char(i) !== ',') throw new NotJson();
      i = this.space(i + 1);
    }
  }

  /** The elements of the array at `at`, each as where it starts and ends. */
  *elements(at: number): Generator<{ start: number; end: number }> {
    let i = this.space(at + 1);
    if (this.char(i) === ']') return;
    for (;;) {
      const end = this.valueEnd(i);
      yield { start: i, end };
      i = this.space(end);
      if (this.char(i) === ']') return;
      if (this.char(i) !== ',') throw new NotJson();
      i = this.space(i + 1);
    }
  }
}

/** Where the list is: the start of its array, or undefined. */
function findList(cursor: JsonCursor, root: number, paths: ListingPaths): number | undefined {
  if (paths.list !== undefined) {
    let at = root;
    for (const segment of paths.list.split('.')) {
      const opening = cursor.char(at);
      let next: number | undefined;
      if (opening === '{') {
        for (const member of cursor.members(at)) if (member.key === segment) next = member.start;
      } else if (opening === '[' && /^\d+$/.test(segment)) {
        let index = 0;
        for (const element of cursor.elements(at)) {
          if (index === Number(segment)) next = element.start;
          index += 1;
        }
      }
      if (next === undefined) return undefined;
      at = next;
    }
    return cursor.char(at) === '[' ? at : undefined;
  }
  const inEnvelope = (at: number, deeper: boolean): number | undefined => {
    if (cursor.char(at) === '[') return at;
    if (cursor.char(at) !== '{') return undefined;
    const values = new Map<string, number>();
    // The last of a repeated key, as JSON.parse keeps it.
    for (const member of cursor.members(at)) values.set(member.key, member.start);
    for (const field of LIST_ENVELOPES) {
      const start = values.get(field);
      if (start !== undefined && cursor.char(start) === '[') return start;
    }
    if (!deeper) return undefined;
    for (const field of LIST_ENVELOPES) {
      const start = values.get(field);
      const nested = start === undefined ? undefined : inEnvelope(start, false);
      if (nested !== undefined) return nested;
    }
    return undefined;
  };
  return inEnvelope(root, true);
}

/**
 * The listing read from the text of `GET /scans`, entry by entry (see the module comment). An
 * answer nested deeper than JSON_LIMITS.maxDepth is refused (VendorJsonLimitError), one that is
 * not JSON too (VendorResponseError); an answer without a list is one unreadable record, as
 * `readScanListing` has it.
 */
export function readScanListingText(
  text: string,
  paths: ListingPaths = {},
  vocabulary: StatusVocabulary = DEFAULT_STATUS_VOCABULARY,
): ScanListing {
  if (jsonDepthExceeds(text, JSON_LIMITS.maxDepth)) {
    throw new VendorJsonLimitError(OPERATION, `the answer nests deeper than ${JSON_LIMITS.maxDepth} levels`);
  }
  const cursor = new JsonCursor(text);
  const scans: ScanListing['scans'][number][] = [];
  const unreadable = new UnreadableSample();
  let entries = 0;
  try {
    const root = cursor.space(0);
    const end = root < text.length ? cursor.valueEnd(root) : root;
    if (cursor.space(end) !== text.length) throw new NotJson();
    const list = root < text.length ? findList(cursor, root, paths) : undefined;
    if (list === undefined) {
      const where = paths.list === undefined ? `(${LIST_ENVELOPES.join('/')})` : `at "${paths.list}"`;
      const what =
        root >= text.length ? 'an empty body' : cursor.char(root) === '{' ? 'an object' : 'a value';
      unreadable.add(null, `no list of scans ${where} in ${what}`);
      return { scans, entries: 0, ...unreadable.result() };
    }
    for (const element of cursor.elements(list)) {
      const index = entries;
      entries += 1;
      const entry: unknown = JSON.parse(text.slice(element.start, element.end));
      const read = readListedScan(entry, index, paths, vocabulary);
      if (typeof read === 'string') unreadable.add(index, read);
      else scans.push(read);
    }
  } catch (error) {
    if (error instanceof NotJson || error instanceof SyntaxError) {
      throw new VendorResponseError(OPERATION, 'the listing is not valid JSON');
    }
    throw error;
  }
  return { scans, entries, ...unreadable.result() };
}

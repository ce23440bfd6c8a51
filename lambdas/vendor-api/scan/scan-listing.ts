/**
 * Tolerant reading of `GET /scans` and `GET /stats`, whose bodies the seed does not show.
 *
 * - The listing: the array is found at a configured path or among common envelopes; in each scan,
 *   uuid, domain, status word and creation time are found at configured paths or among common
 *   names. A scan without a usable uuid or domain is recorded as unreadable by position, with a
 *   reason that describes the problem, never the value; the rest of the list is still used.
 * - The statistics: every numeric field (up to {@link MAX_STATISTICS}, three levels deep) becomes a
 *   named number, except a field whose name or value redaction would touch (a key value echoed as a
 *   field name, an address) or whose name is a credential's (`token`, `api_key`): its number may be
 *   a secret, and a name becomes a metric dimension and a stored field; the counts of finished and failed scans are read at configured paths, or summed
 *   over the first object whose keys are status words the vocabulary knows (`by_status.completed`).
 */
import { ALREADY_ACCEPTED, normalizeDomain, validateUuid } from '#lambdas/platform/input/validation';
import { needsRedaction, redactDeep } from '#lambdas/platform/redaction/redact';
import {
  describe,
  findArray,
  isRecord,
  type UnreadableEntry,
  valueAtPath,
} from '#lambdas/vendor-api/transport/json';
import { DEFAULT_STATUS_VOCABULARY, stateOf } from './status.ts';
import type { ScanState, StatusVocabulary } from './types.ts';

export interface ListedScan {
  /** Position in the vendor's list. */
  readonly index: number;
  readonly uuid: string;
  readonly domain: string;
  /** The vendor's word, when the listing carries one. */
  readonly vendorStatus: string | undefined;
  /** What the vocabulary makes of that word (`unknown` without one). */
  readonly state: ScanState;
  /** When the vendor created the scan, when the listing says. */
  readonly createdAt: Date | undefined;
}

export interface ScanListing {
  readonly scans: readonly ListedScan[];
  /** The first {@link UNREADABLE_SAMPLE} entries that could not be used, each with why. */
  readonly unreadable: readonly UnreadableEntry[];
  /** How many entries could not be used: every one, not only those in the sample. */
  readonly unreadableCount: number;
  /** Entries in the vendor's list, readable or not. */
  readonly entries: number;
}

/**
 * Unreadable entries described one by one: enough to show what is wrong with a listing, while a
 * listing of millions of bad entries takes a count, not a record each.
 */
export const UNREADABLE_SAMPLE = 100;

/** A count of unreadable entries and the first {@link UNREADABLE_SAMPLE} of them. */
export class UnreadableSample {
  private readonly sample: UnreadableEntry[] = [];
  private count = 0;

  add(index: number | null, reason: string): void {
    this.count += 1;
    if (this.sample.length < UNREADABLE_SAMPLE) this.sample.push({ index, reason });
  }

  result(): Pick<ScanListing, 'unreadable' | 'unreadableCount'> {
    return { unreadable: this.sample, unreadableCount: this.count };
  }
}

export interface ListingPaths {
  readonly list?: string | undefined;
  readonly uuid?: string | undefined;
  readonly domain?: string | undefined;
  readonly status?: string | undefined;
  readonly createdAt?: string | undefined;
}

export const LIST_ENVELOPES = ['scans', 'items', 'data', 'results'];
const FIELD_NAMES = {
  uuid: ['uuid', 'scan_uuid', 'scanUuid', 'id'],
  domain: ['domain', 'target', 'host', 'hostname'],
  status: ['status', 'state', 'scan_status', 'phase'],
  createdAt: ['created_at', 'createdAt', 'created', 'started_at', 'start_time'],
} as const;
const MAX_WORD_LENGTH = 64;

export function readScanListing(
  raw: unknown,
  paths: ListingPaths = {},
  vocabulary: StatusVocabulary = DEFAULT_STATUS_VOCABULARY,
): ScanListing {
  const found = paths.list === undefined ? findArray(raw, LIST_ENVELOPES) : valueAtPath(raw, paths.list);
  if (!Array.isArray(found)) {
    const where = paths.list === undefined ? `(${LIST_ENVELOPES.join('/')})` : `at "${paths.list}"`;
    return {
      scans: [],
      entries: 0,
      unreadable: [{ index: null, reason: `no list of scans ${where} in ${describe(raw)}` }],
      unreadableCount: 1,
    };
  }
  const scans: ListedScan[] = [];
  const unreadable = new UnreadableSample();
  for (const [index, entry] of found.entries()) {
    const read = readListedScan(entry, index, paths, vocabulary);
    if (typeof read === 'string') unreadable.add(index, read);
    else scans.push(read);
  }
  return { scans, entries: found.length, ...unreadable.result() };
}

/** One entry of the list, or why it cannot be used (never its value). */
export function readListedScan(
  entry: unknown,
  index: number,
  paths: ListingPaths,
  vocabulary: StatusVocabulary,
): ListedScan | string {
  if (!isRecord(entry)) return `${describe(entry)}, not a scan record`;
  const uuidText = field(entry, 'uuid', paths.uuid);
  if (typeof uuidText !== 'string') return `no uuid (${named('uuid', paths.uuid)})`;
  let uuid: string;
  try {
    uuid = validateUuid(uuidText, 'uuid');
  } catch {
    return `the uuid (${named('uuid', paths.uuid)}) is not a UUID`;
  }
  const domainText = field(entry, 'domain', paths.domain);
  if (typeof domainText !== 'string') return `no domain (${named('domain', paths.domain)})`;
  let domain: string;
  try {
    domain = normalizeDomain(domainText, 'domain', ALREADY_ACCEPTED);
  } catch {
    return `the domain (${named('domain', paths.domain)}) is not a domain name`;
  }
  const word = field(entry, 'status', paths.status);
  const vendorStatus =
    typeof word === 'string' && word.trim() !== '' ? word.trim().slice(0, MAX_WORD_LENGTH) : undefined;
  return {
    index,
    uuid,
    domain,
    vendorStatus,
    state: vendorStatus === undefined ? 'unknown' : stateOf(vendorStatus, vocabulary),
    createdAt: timeOf(field(entry, 'createdAt', paths.createdAt)),
  };
}

function field(
  entry: Record<string, unknown>,
  name: keyof typeof FIELD_NAMES,
  path: string | undefined,
): unknown {
  if (path !== undefined) return valueAtPath(entry, path);
  for (const candidate of FIELD_NAMES[name]) {
    const value = entry[candidate];
    if (value !== undefined && value !== null && value !== '') return value;
  }
  return undefined;
}

function named(name: keyof typeof FIELD_NAMES, path: string | undefined): string {
  return path === undefined ? FIELD_NAMES[name].join('/') : `"${path}"`;
}

/** ISO text, or epoch seconds or milliseconds; undefined for anything else. */
export function timeOf(value: unknown): Date | undefined {
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim())) return timeOf(Number(value));
  // Below 1e11 an epoch count is seconds (1e11 s is the year 5138; 1e11 ms is 1973).
  const ms =
    typeof value === 'number'
      ? value < 1e11
        ? value * 1000
        : value
      : typeof value === 'string' && value.trim() !== ''
        ? Date.parse(value)
        : Number.NaN;
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

// --- /stats ---------------------------------------------------------------------------------------

/** At most this many numeric fields become metrics: a vendor's odd answer must not flood CloudWatch. */
export const MAX_STATISTICS = 40;
const MAX_DEPTH = 3;
const STATISTIC_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export interface VendorStatistics {
  /** Each numeric field by its dot path, in the answer's order. */
  readonly numbers: readonly { readonly name: string; readonly value: number }[];
  /** Fields left out: too many, too deep, a name unfit for a metric dimension, or one holding a secret. */
  readonly skipped: number;
  /** The vendor's count of finished (succeeded) scans, when one was found. */
  readonly finished: number | undefined;
  /** The vendor's count of failed scans, when one was found. */
  readonly failed: number | undefined;
  /** Why the answer as a whole could not be used, when it could not. */
  readonly unreadable: string | undefined;
}

export function readVendorStatistics(
  raw: unknown,
  paths: { readonly finished?: string | undefined; readonly failed?: string | undefined } = {},
  vocabulary: StatusVocabulary = DEFAULT_STATUS_VOCABULARY,
): VendorStatistics {
  if (!isRecord(raw)) {
    return {
      numbers: [],
      skipped: 0,
      finished: undefined,
      failed: undefined,
      unreadable: `the statistics are ${describe(raw)}, not an object`,
    };
  }
  const numbers: { name: string; value: number }[] = [];
  let skipped = 0;
  const walk = (node: Record<string, unknown>, prefix: string, depth: number) => {
    for (const [key, value] of Object.entries(node)) {
      const name = prefix === '' ? key : `${prefix}.${key}`;
      if (typeof value === 'number' && Number.isFinite(value)) {
        const publishable = STATISTIC_NAME.test(name) && !holdsSecretField(name, value);
        if (numbers.length < MAX_STATISTICS && publishable) numbers.push({ name, value });
        else skipped += 1;
      } else if (isRecord(value)) {
        if (depth < MAX_DEPTH) walk(value, name, depth + 1);
        else skipped += 1;
      }
    }
  };
  walk(raw, '', 1);
  const at = (path: string | undefined) => {
    if (path === undefined) return undefined;
    const value = valueAtPath(raw, path);
    return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  };
  const byWords = countsByStatusWord(raw, vocabulary);
  return {
    numbers,
    skipped,
    finished: paths.finished === undefined ? byWords?.succeeded : at(paths.finished),
    failed: paths.failed === undefined ? byWords?.failed : at(paths.failed),
    unreadable: undefined,
  };
}

/**
 * A numeric field that may not leave the answer: its name or number holds what redaction removes (a
 * key in use, an address, a key's shape), or one of its names is a credential's, whose number
 * redaction blanks (`{"token": 12345678}`).
 */
function holdsSecretField(name: string, value: number): boolean {
  if (needsRedaction(name) || needsRedaction(String(value))) return true;
  return name.split('.').some((segment) => redactDeep({ [segment]: value })[segment] !== value);
}

/**
 * The first object, breadth first, with numeric fields named by status words, summed per state:
 * `{by_status: {completed: 3, failed: 1}}` gives succeeded 3, failed 1. Undefined when none.
 */
function countsByStatusWord(
  raw: Record<string, unknown>,
  vocabulary: StatusVocabulary,
): Partial<Record<ScanState, number>> | undefined {
  const queue: { node: Record<string, unknown>; depth: number }[] = [{ node: raw, depth: 1 }];
  while (queue.length > 0) {
    const { node, depth } = queue.shift() as { node: Record<string, unknown>; depth: number };
    const sums: Partial<Record<ScanState, number>> = {};
    let matched = false;
    for (const [key, value] of Object.entries(node)) {
      const state = stateOf(key, vocabulary);
      if (typeof value === 'number' && Number.isFinite(value) && state !== 'unknown') {
        sums[state] = (sums[state] ?? 0) + value;
        matched = true;
      } else if (isRecord(value) && depth < MAX_DEPTH) {
        queue.push({ node: value, depth: depth + 1 });
      }
    }
    if (matched) return { succeeded: 0, failed: 0, ...sums };
  }
  return undefined;
}

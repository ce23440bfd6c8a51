/**
 * The zip-bomb guards of an archive check, as pure functions over what a ZIP's central directory
 * and local headers declare: how many entries, how many bytes they inflate to in total, how far
 * each one inflates beyond its compressed size, and whether two entries share bytes. They read no
 * object and inflate nothing, so they run before a single byte is inflated, whichever reader
 * (ranged reads or one streaming pass) produced the numbers.
 *
 * yauzl's `validateEntrySizes` makes an entry that inflates past its declared size an error, so
 * the declared sizes checked here bound what inflating can cost.
 */
import { ArchiveVerificationError } from '#lambdas/platform/errors';

export interface ZipLimits {
  /** Entries in the central directory. */
  readonly maxEntries: number;
  /** Sum of every entry's declared uncompressed size. */
  readonly maxUncompressedBytes: number;
  /** An entry's declared uncompressed size over its compressed size. */
  readonly maxCompressionRatio: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = Object.freeze({
  maxEntries: 10_000,
  maxUncompressedBytes: 1024 ** 3,
  maxCompressionRatio: 100,
});

/**
 * Entries at most this large are exempt from the ratio: a few KiB of repeated text legitimately
 * deflates 100:1 or more, and inflating it costs nothing.
 */
export const RATIO_EXEMPT_BYTES = 1024 * 1024;

/** What the checks need to know about one entry (from the central directory). */
export interface DeclaredEntry {
  readonly index: number;
  readonly name: string;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
}

/** The bytes an entry occupies: its local header up to the end of its compressed data. */
export interface EntryRange {
  readonly index: number;
  readonly name: string;
  /** Offset of the local file header. */
  readonly start: number;
  /** One past the last compressed byte. */
  readonly end: number;
}

export function checkEntryCount(count: number, limits: ZipLimits): void {
  if (count > limits.maxEntries) {
    throw new ArchiveVerificationError(
      'limits',
      `${count} entries; at most ${limits.maxEntries} are accepted`,
    );
  }
}

/** The declared uncompressed total, refused above `maxUncompressedBytes`. */
export function checkTotalUncompressed(entries: readonly DeclaredEntry[], limits: ZipLimits): number {
  const total = entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
  if (total > limits.maxUncompressedBytes) {
    throw new ArchiveVerificationError(
      'limits',
      `the entries inflate to ${total} bytes; at most ${limits.maxUncompressedBytes} are accepted`,
    );
  }
  return total;
}

export function checkCompressionRatio(entry: DeclaredEntry, limits: ZipLimits): void {
  if (entry.uncompressedSize <= RATIO_EXEMPT_BYTES) return;
  // A compressed size of 0 inflating to more than the exemption is an infinite ratio.
  const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, Number.MIN_VALUE);
  if (ratio > limits.maxCompressionRatio) {
    throw new ArchiveVerificationError(
      'limits',
      `${label(entry)} inflates ${entry.compressedSize} bytes to ${entry.uncompressedSize} (more than ${limits.maxCompressionRatio}:1)`,
    );
  }
}

/**
 * Every entry's bytes are its own and lie before the central directory. Entries that share their
 * data (several names over one deflate stream) would multiply what the archive inflates to without
 * costing its author a byte, and no archiver writes them.
 */
export function checkNoOverlap(ranges: readonly EntryRange[], centralDirectoryOffset: number): void {
  const sorted = [...ranges].sort((a, b) => a.start - b.start || a.index - b.index);
  for (const [position, range] of sorted.entries()) {
    if (range.end > centralDirectoryOffset) {
      throw new ArchiveVerificationError(
        'limits',
        `${label(range)} runs into the central directory (bytes ${range.start}-${range.end}, directory at ${centralDirectoryOffset})`,
      );
    }
    const previous = sorted[position - 1];
    if (previous !== undefined && range.start < previous.end) {
      const [first, second] = previous.index < range.index ? [previous, range] : [range, previous];
      throw new ArchiveVerificationError(
        'limits',
        `${label(first)} and ${label(second)} overlap (bytes ${range.start}-${Math.min(range.end, previous.end)} are shared)`,
      );
    }
  }
}

function label(entry: { readonly index: number; readonly name: string }): string {
  return `entry ${entry.index} (${printable(entry.name)})`;
}

/** Entry names come from the archive: printable ASCII only, bounded, in messages. */
export function printable(name: string): string {
  return name.replace(/[^\x20-\x7e]/g, '?').slice(0, 120);
}

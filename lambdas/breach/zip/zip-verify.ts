/**
 * Verifies a ZIP already stored in S3 without holding it in memory, in a number of S3 requests
 * that does not grow with its entries: the first bytes are a local-file header; yauzl finds the
 * end-of-central-directory record and reads the central directory from one cached read of the
 * object's tail, which must end exactly where the end record says; then ONE streamed GET runs over
 * the entries in the order they are stored, checking each one's local header, inflating its data
 * to exactly the declared size and comparing its CRC-32 (zlib.crc32) with the central directory's.
 * yauzl itself never checks CRCs. Four requests in all, whatever the entry count: a 10,000-entry
 * report at Lambda's 10-30 ms per request would otherwise take some 40,000 sequential ranged GETs.
 *
 * Before anything is inflated, the zip-bomb guards of `zip-limits.ts` run over what the archive
 * declares: the entry count, the total uncompressed size, each entry's compression ratio, and that
 * no two entries share bytes, first on the least each entry must occupy (a 30-byte local header and
 * its compressed data), then exactly, on its local header as the pass reaches it.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createInflateRaw } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import * as yauzl from 'yauzl';
import { type ArchiveCheck, ArchiveVerificationError } from '#lambdas/platform/errors';
import { ByteCursor } from './byte-cursor.ts';
import { S3RangeReader, type StoredObjectRef } from './s3-range-reader.ts';
import {
  checkCompressionRatio,
  checkEntryCount,
  checkNoOverlap,
  checkTotalUncompressed,
  DEFAULT_ZIP_LIMITS,
  type EntryRange,
  printable,
  type ZipLimits,
} from './zip-limits.ts';

export type { StoredObjectRef } from './s3-range-reader.ts';

export interface ZipEntrySummary {
  readonly name: string;
  readonly size: number;
  readonly compressedSize: number;
  /** 8 lower-case hex digits. */
  readonly crc32: string;
}

export interface VerifiedZip {
  readonly entries: readonly ZipEntrySummary[];
  readonly totalUncompressedBytes: number;
  /** S3 requests the check sent. */
  readonly requests: number;
}

/** The zip-bomb guards (`ZipLimits`); each one left out takes its default (`DEFAULT_ZIP_LIMITS`). */
export type ZipVerifyLimits = Partial<ZipLimits>;

const LOCAL_FILE_HEADER = 0x04034b50;
const LOCAL_HEADER_BYTES = 30;
/** What may follow the last central directory entry: the (zip64) end record or a digital signature. */
const AFTER_CENTRAL_DIRECTORY = new Set([0x06054b50, 0x06064b50, 0x05054b50]);

export async function verifyStoredZip(
  s3: S3Client,
  object: StoredObjectRef,
  partialLimits: ZipVerifyLimits = {},
): Promise<VerifiedZip> {
  const reader = new S3RangeReader(s3, object);
  const failing = (check: ArchiveCheck, problem: string) => new ArchiveVerificationError(check, problem);
  if (object.size < 4 || (await reader.bytes(0, 4)).readUInt32LE(0) !== LOCAL_FILE_HEADER) {
    throw failing('not-zip', 'the first bytes are not a ZIP local-file header');
  }
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.fromRandomAccessReader(
        reader,
        object.size,
        { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false },
        (error, opened) => (error ? reject(error) : resolve(opened)),
      ),
    );
  } catch (error) {
    throw reader.ioError ?? failing('end-of-central-directory', reasonOf(error));
  }
  try {
    const limits: ZipLimits = { ...DEFAULT_ZIP_LIMITS, ...partialLimits };
    checkEntryCount(zip.entryCount, limits);
    // yauzl's cursor (typed wrongly as a boolean in @types/yauzl) starts at the central directory.
    const cursorOf = () => (zip as unknown as { readEntryCursor: number }).readEntryCursor;
    const centralDirectoryOffset = cursorOf();
    const entries = await readCentralDirectory(zip, reader);
    const cursor = cursorOf();
    const after = await reader.bytes(cursor, Math.min(cursor + 4, object.size));
    if (after.length < 4 || !AFTER_CENTRAL_DIRECTORY.has(after.readUInt32LE(0))) {
      throw failing('central-directory', 'the central directory does not end where the end record says');
    }
    const declared = entries.map((entry, index) => ({
      index,
      name: entry.fileName,
      compressedSize: entry.compressedSize,
      uncompressedSize: entry.uncompressedSize,
    }));
    const total = checkTotalUncompressed(declared, limits);
    for (const entry of declared) checkCompressionRatio(entry, limits);
    // The least each entry occupies: overlapping here means overlapping for certain.
    checkNoOverlap(
      entries.map((entry, index) => ({
        index,
        name: entry.fileName,
        start: entry.relativeOffsetOfLocalHeader,
        end: entry.relativeOffsetOfLocalHeader + LOCAL_HEADER_BYTES + entry.compressedSize,
      })),
      centralDirectoryOffset,
    );
    const summaries = await verifyEntriesInOnePass(reader, entries, centralDirectoryOffset);
    return { entries: summaries, totalUncompressedBytes: total, requests: reader.requests };
  } finally {
    zip.close();
  }
}

async function readCentralDirectory(zip: yauzl.ZipFile, reader: S3RangeReader): Promise<yauzl.Entry[]> {
  const entries: yauzl.Entry[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        entries.push(entry);
        zip.readEntry();
      });
      zip.once('end', resolve);
      zip.once('error', reject);
      zip.readEntry();
    });
  } catch (error) {
    throw reader.ioError ?? new ArchiveVerificationError('central-directory', reasonOf(error));
  }
  return entries;
}

/**
 * One GET from the first local header to the central directory; the entries in storage order,
 * each one's exact range checked against the one before it as its local header is read.
 */
async function verifyEntriesInOnePass(
  reader: S3RangeReader,
  entries: readonly yauzl.Entry[],
  centralDirectoryOffset: number,
): Promise<ZipEntrySummary[]> {
  const summaries: ZipEntrySummary[] = new Array(entries.length);
  if (entries.length === 0) return summaries;
  const order = entries
    .map((entry, index) => ({ entry, index }))
    .sort(
      (a, b) =>
        a.entry.relativeOffsetOfLocalHeader - b.entry.relativeOffsetOfLocalHeader || a.index - b.index,
    );
  const first = order[0]?.entry.relativeOffsetOfLocalHeader ?? 0;
  const body: Readable = reader.stream(first, centralDirectoryOffset);
  const cursor = new ByteCursor(body[Symbol.asyncIterator]() as AsyncIterator<Buffer>, first);
  let previous: EntryRange | undefined;
  try {
    for (const { entry, index } of order) {
      const label = `entry ${index} (${printable(entry.fileName)})`;
      const start = entry.relativeOffsetOfLocalHeader;
      // The lower-bound check ran already; this catches a local header longer than the directory's.
      if (previous !== undefined && start < previous.end) {
        checkNoOverlap(
          [
            previous,
            { index, name: entry.fileName, start, end: start + LOCAL_HEADER_BYTES + entry.compressedSize },
          ],
          centralDirectoryOffset,
        );
      }
      let dataStart: number;
      let disagreement: string | undefined;
      try {
        await cursor.skipTo(start);
        const header = await cursor.exactly(LOCAL_HEADER_BYTES);
        if (header.readUInt32LE(0) !== LOCAL_FILE_HEADER) {
          throw new Error(`invalid local file header signature: 0x${header.readUInt32LE(0).toString(16)}`);
        }
        const localName = await cursor.exactly(header.readUInt16LE(26));
        disagreement = localHeaderDisagreement(header, localName, entry);
        // The local header's own name and extra field lengths decide where the data starts.
        dataStart = start + LOCAL_HEADER_BYTES + header.readUInt16LE(26) + header.readUInt16LE(28);
      } catch (error) {
        throw (
          reader.ioError ??
          cursor.sourceError ??
          new ArchiveVerificationError('entry', `${label}: ${reasonOf(error)}`)
        );
      }
      const range = { index, name: entry.fileName, start, end: dataStart + entry.compressedSize };
      checkNoOverlap(previous ? [previous, range] : [range], centralDirectoryOffset);
      // A streaming extractor writes what the local header says: it must say what was verified.
      if (disagreement !== undefined) {
        throw new ArchiveVerificationError(
          'entry',
          `${label}: its local header ${disagreement} than the central directory`,
        );
      }
      previous = range;
      try {
        await cursor.skipTo(dataStart);
      } catch (error) {
        throw (
          reader.ioError ??
          cursor.sourceError ??
          new ArchiveVerificationError('entry', `${label}: ${reasonOf(error)}`)
        );
      }
      summaries[index] = await verifyEntry(reader, cursor, entry, label);
    }
  } finally {
    body.destroy();
  }
  return summaries;
}

async function verifyEntry(
  reader: S3RangeReader,
  cursor: ByteCursor,
  entry: yauzl.Entry,
  label: string,
): Promise<ZipEntrySummary> {
  const expected = (entry.crc32 >>> 0).toString(16).padStart(8, '0');
  const summary = {
    name: entry.fileName,
    size: entry.uncompressedSize,
    compressedSize: entry.compressedSize,
    crc32: expected,
  };
  if (entry.isEncrypted()) throw new ArchiveVerificationError('entry', `${label} is encrypted`);
  // A directory entry (`notes/`) is read like any other: strict readers check its bytes and CRC-32
  // too, and one that carries data is data all the same.
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw new ArchiveVerificationError(
      'entry',
      `${label} uses compression method ${entry.compressionMethod}; only stored (0) and deflate (8) are read`,
    );
  }
  const dataEnd = cursor.position + entry.compressedSize;
  let crc = 0;
  let produced = 0;
  const count = (chunk: Buffer) => {
    produced += chunk.length;
    // As yauzl's validateEntrySizes: inflating past the declared size stops at once.
    if (produced > entry.uncompressedSize) {
      throw new Error(
        `too many bytes in the stream. expected ${entry.uncompressedSize}. got at least ${produced}`,
      );
    }
    crc = crc32(chunk, crc);
  };
  try {
    if (entry.compressionMethod === 0) {
      for await (const chunk of cursor.chunks(entry.compressedSize)) count(chunk);
    } else {
      await pipeline(
        cursor.chunks(entry.compressedSize),
        createInflateRaw(),
        async (inflated: AsyncIterable<Buffer>) => {
          for await (const chunk of inflated) count(chunk);
        },
      );
      // A deflate stream that ends before its compressed size leaves bytes the next entry skips.
      await cursor.skipTo(dataEnd);
    }
    if (produced !== entry.uncompressedSize) {
      throw new Error(
        `not enough bytes in the stream. expected ${entry.uncompressedSize}. got only ${produced}`,
      );
    }
  } catch (error) {
    throw (
      reader.ioError ??
      cursor.sourceError ??
      new ArchiveVerificationError('entry', `${label}: ${reasonOf(error)}`)
    );
  }
  const actual = (crc >>> 0).toString(16).padStart(8, '0');
  if (actual !== expected) {
    throw new ArchiveVerificationError(
      'crc',
      `${label} has CRC-32 ${actual}; the central directory says ${expected}`,
    );
  }
  return summary;
}

/** Where the general purpose flags say the CRC-32 and sizes follow the data, not the local header. */
const DATA_DESCRIPTOR_FLAG = 0x8;
/** A local header size of all ones: the real one is in the zip64 extra field. */
const ZIP64_MARKER = 0xffffffff;

/**
 * How an entry's local header disagrees with its central directory entry (`names another file`,
 * `gives another compression method`, …), or undefined when it agrees on name, method, flags and,
 * unless a data descriptor or zip64 defers them, CRC-32 and sizes. Strict readers (Python's
 * zipfile) refuse an archive whose headers disagree; streaming extractors use the local header.
 */
function localHeaderDisagreement(header: Buffer, localName: Buffer, entry: yauzl.Entry): string | undefined {
  const centralName = (entry as unknown as { fileNameRaw?: Buffer }).fileNameRaw;
  if (centralName !== undefined && !localName.equals(centralName)) return 'names another file';
  if (header.readUInt16LE(8) !== entry.compressionMethod) return 'gives another compression method';
  const flags = header.readUInt16LE(6);
  if (flags !== entry.generalPurposeBitFlag) return 'sets other general purpose flags';
  if ((flags & DATA_DESCRIPTOR_FLAG) !== 0) return undefined;
  if (header.readUInt32LE(14) >>> 0 !== entry.crc32 >>> 0) return 'gives another CRC-32';
  const compressed = header.readUInt32LE(18);
  if (compressed !== ZIP64_MARKER && compressed !== entry.compressedSize)
    return 'gives another compressed size';
  const uncompressed = header.readUInt32LE(22);
  if (uncompressed !== ZIP64_MARKER && uncompressed !== entry.uncompressedSize) {
    return 'gives another uncompressed size';
  }
  return undefined;
}

/** yauzl's and zlib's messages name structures and offsets, never content; bounded anyway. */
function reasonOf(error: unknown): string {
  return String((error as Error)?.message ?? error).slice(0, 300);
}

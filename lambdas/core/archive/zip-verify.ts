/**
 * Verifies a ZIP already stored in S3, with yauzl over ranged reads (never the whole object in
 * memory): the first bytes are a local-file header; the end-of-central-directory record is found
 * and the central directory ends exactly where it says; every entry's local header is valid, its
 * data inflates to the declared size, and its CRC-32 (zlib.crc32, computed while streaming)
 * matches the central directory. yauzl itself never checks CRCs.
 *
 * Before anything is inflated, the zip-bomb guards of `zip-limits.ts` run over what the archive
 * declares: the entry count, the total uncompressed size, each entry's compression ratio, and that
 * no two entries share bytes (each entry's local header is read once for that, and its data is
 * then streamed from the offset that header gave).
 */
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import * as yauzl from 'yauzl';
import { type ArchiveCheck, ArchiveVerificationError } from '#core/errors';
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
}

/** The zip-bomb guards (`ZipLimits`); each one left out takes its default (`DEFAULT_ZIP_LIMITS`). */
export type ZipVerifyLimits = Partial<ZipLimits>;

export interface StoredObjectRef {
  readonly bucket: string;
  readonly key: string;
  readonly versionId?: string;
  readonly size: number;
}

const LOCAL_FILE_HEADER = 0x04034b50;
/** What may follow the last central directory entry: the (zip64) end record or a digital signature. */
const AFTER_CENTRAL_DIRECTORY = new Set([0x06054b50, 0x06064b50, 0x05054b50]);

/** Reads byte ranges of one S3 object version; an S3 failure is kept apart from ZIP problems. */
class S3RangeReader extends yauzl.RandomAccessReader {
  ioError: unknown;
  ranges = 0;

  constructor(
    private readonly s3: S3Client,
    private readonly object: StoredObjectRef,
  ) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    if (end <= start) return Readable.from([]);
    const out = new PassThrough();
    this.ranges += 1;
    this.s3
      .send(
        new GetObjectCommand({
          Bucket: this.object.bucket,
          Key: this.object.key,
          ...(this.object.versionId ? { VersionId: this.object.versionId } : {}),
          Range: `bytes=${start}-${end - 1}`,
        }),
      )
      .then(
        (response) => pipeline(response.Body as Readable, out).catch((error) => this.fail(out, error)),
        (error) => this.fail(out, error),
      );
    return out;
  }

  async bytes(start: number, end: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this._readStreamForRange(start, end)) chunks.push(chunk as Buffer);
    if (this.ioError !== undefined) throw this.ioError;
    return Buffer.concat(chunks);
  }

  private fail(out: PassThrough, error: unknown): void {
    this.ioError ??= error;
    out.destroy(error as Error);
  }
}

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
    const dataStarts: number[] = [];
    const ranges: EntryRange[] = [];
    for (const [index, entry] of entries.entries()) {
      const start = await fileDataStartOf(zip, reader, entry, index);
      dataStarts.push(start);
      ranges.push({
        index,
        name: entry.fileName,
        start: entry.relativeOffsetOfLocalHeader,
        end: start + entry.compressedSize,
      });
    }
    checkNoOverlap(ranges, centralDirectoryOffset);
    const summaries: ZipEntrySummary[] = [];
    for (const [index, entry] of entries.entries()) {
      summaries.push(await verifyEntry(zip, reader, entry, index, dataStarts[index] as number));
    }
    return { entries: summaries, totalUncompressedBytes: total };
  } finally {
    zip.close();
  }
}

/** Where an entry's data starts, from its local header (whose name and extra field may differ). */
async function fileDataStartOf(
  zip: yauzl.ZipFile,
  reader: S3RangeReader,
  entry: yauzl.Entry,
  index: number,
): Promise<number> {
  try {
    const header = await new Promise<{ fileDataStart: number }>((resolve, reject) =>
      zip.readLocalFileHeader(entry, { minimal: true }, (error, read) =>
        error ? reject(error) : resolve(read),
      ),
    );
    return header.fileDataStart;
  } catch (error) {
    throw (
      reader.ioError ??
      new ArchiveVerificationError(
        'entry',
        `entry ${index} (${printable(entry.fileName)}): ${reasonOf(error)}`,
      )
    );
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

async function verifyEntry(
  zip: yauzl.ZipFile,
  reader: S3RangeReader,
  entry: yauzl.Entry,
  index: number,
  fileDataStart: number,
): Promise<ZipEntrySummary> {
  const label = `entry ${index} (${printable(entry.fileName)})`;
  const expected = (entry.crc32 >>> 0).toString(16).padStart(8, '0');
  const summary = {
    name: entry.fileName,
    size: entry.uncompressedSize,
    compressedSize: entry.compressedSize,
    crc32: expected,
  };
  if (entry.isEncrypted()) throw new ArchiveVerificationError('entry', `${label} is encrypted`);
  if (entry.fileName.endsWith('/')) return summary;
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw new ArchiveVerificationError(
      'entry',
      `${label} uses compression method ${entry.compressionMethod}; only stored (0) and deflate (8) are read`,
    );
  }
  let crc = 0;
  try {
    // The local header was read once already (fileDataStartOf): no second ranged read for it.
    const stream = await new Promise<Readable>((resolve, reject) =>
      zip.openReadStreamLowLevel(
        fileDataStart,
        entry.compressedSize,
        0,
        entry.compressedSize,
        entry.compressionMethod === 8,
        entry.uncompressedSize,
        (error, opened) => (error ? reject(error) : resolve(opened)),
      ),
    );
    for await (const chunk of stream) crc = crc32(chunk as Buffer, crc);
  } catch (error) {
    throw reader.ioError ?? new ArchiveVerificationError('entry', `${label}: ${reasonOf(error)}`);
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

/** yauzl's and zlib's messages name structures and offsets, never content; bounded anyway. */
function reasonOf(error: unknown): string {
  return String((error as Error)?.message ?? error).slice(0, 300);
}

/**
 * Adversarial bodies for the simulator's faults, built cheaply and never held whole: a gzip body
 * that inflates to gigabytes of zeros, streamed lazily; ZIPs whose one entry is a deflate bomb, or
 * whose entries all point at the same bytes.
 *
 * Deflating with a full flush ends each block on a byte boundary and resets the window, so one
 * compressed block of zeros can be repeated as often as wanted: the body costs one 1 MiB deflate,
 * however large it claims to be.
 */
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';

const BLOCK_BYTES = 1024 * 1024;
const ZEROS = Buffer.alloc(BLOCK_BYTES);
/** A final, empty fixed-Huffman block: the end of a raw deflate stream. */
const FINAL_BLOCK = zlib.deflateRawSync(Buffer.alloc(0));

function flushedZeros(bytes: number): Buffer {
  return zlib.deflateRawSync(Buffer.alloc(bytes), { finishFlush: zlib.constants.Z_FULL_FLUSH });
}

let fullBlock: Buffer | undefined;

/** Raw deflate of `bytes` zeros, a piece at a time, ending with the final block. */
function* deflatedZeros(bytes: number): Generator<Buffer> {
  fullBlock ??= flushedZeros(BLOCK_BYTES);
  for (let left = bytes; left > 0; left -= BLOCK_BYTES) {
    yield left >= BLOCK_BYTES ? fullBlock : flushedZeros(left);
  }
  yield FINAL_BLOCK;
}

/** CRC-32 of `bytes` zeros. */
function crcOfZeros(bytes: number): number {
  let crc = 0;
  for (let left = bytes; left > 0; left -= BLOCK_BYTES) {
    crc = zlib.crc32(left >= BLOCK_BYTES ? ZEROS : ZEROS.subarray(0, left), crc);
  }
  return crc >>> 0;
}

/**
 * A gzip member inflating to `bytes` zeros (about 1000:1), generated as it is read: a client that
 * stops reading stops the generation. The trailer's CRC is only computed if the end is reached.
 */
export async function* gzipBomb(bytes: number): AsyncGenerator<Buffer> {
  yield Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);
  for (const piece of deflatedZeros(bytes)) yield piece;
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crcOfZeros(bytes), 0);
  trailer.writeUInt32LE(bytes % 2 ** 32, 4);
  yield trailer;
}

/** `bytes` zeros in 1 MiB chunks, generated as they are read. */
export async function* zeros(bytes: number): AsyncGenerator<Buffer> {
  for (let left = bytes; left > 0; left -= BLOCK_BYTES) {
    yield left >= BLOCK_BYTES ? ZEROS : ZEROS.subarray(0, left);
  }
}

interface ZipData {
  readonly method: 0 | 8;
  readonly data: Buffer;
  readonly crc: number;
  readonly size: number;
}

/** Local header (30 bytes + name), without data. */
function localHeader(name: Buffer, item: ZipData): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(item.method, 8);
  header.writeUInt16LE(0x21, 12); // 1980-01-01
  header.writeUInt32LE(item.crc, 14);
  header.writeUInt32LE(item.data.length, 18);
  header.writeUInt32LE(item.size, 22);
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, name]);
}

function centralEntry(name: Buffer, item: ZipData, offset: number): Buffer {
  const entry = Buffer.alloc(46);
  entry.writeUInt32LE(0x02014b50, 0);
  entry.writeUInt16LE(20, 4);
  entry.writeUInt16LE(20, 6);
  entry.writeUInt16LE(item.method, 10);
  entry.writeUInt16LE(0x21, 14);
  entry.writeUInt32LE(item.crc, 16);
  entry.writeUInt32LE(item.data.length, 20);
  entry.writeUInt32LE(item.size, 24);
  entry.writeUInt16LE(name.length, 28);
  entry.writeUInt32LE(offset, 42);
  return Buffer.concat([entry, name]);
}

function endRecord(entries: number, directorySize: number, directoryOffset: number): Buffer {
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries, 8);
  end.writeUInt16LE(entries, 10);
  end.writeUInt32LE(directorySize, 12);
  end.writeUInt32LE(directoryOffset, 16);
  return end;
}

/**
 * A ZIP whose `names` all point at one local header and its data: every entry inflates the same
 * stream. With one name it is an ordinary single-entry ZIP.
 */
function sharedDataZip(names: readonly string[], item: ZipData): Buffer {
  const first = Buffer.from(names[0] ?? 'data.bin');
  const local = Buffer.concat([localHeader(first, item), item.data]);
  const directory = Buffer.concat(names.map((name) => centralEntry(Buffer.from(name), item, 0)));
  return Buffer.concat([local, directory, endRecord(names.length, directory.length, local.length)]);
}

const MAX_ZIP32_BYTES = 2 ** 32 - 1;

function checkZip32(bytes: number, field: string): void {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > MAX_ZIP32_BYTES) {
    throw new TypeError(`${field} must be a whole number from 1 to ${MAX_ZIP32_BYTES} (no zip64)`);
  }
}

function deflatedZerosItem(bytes: number): ZipData {
  return { method: 8, data: Buffer.concat([...deflatedZeros(bytes)]), crc: crcOfZeros(bytes), size: bytes };
}

/** One deflated entry of `inflatedBytes` zeros: a ZIP about a thousandth of what it inflates to. */
export function zipBomb(inflatedBytes: number): Buffer {
  checkZip32(inflatedBytes, 'inflatedBytes');
  return sharedDataZip(['attachments.bin'], deflatedZerosItem(inflatedBytes));
}

/**
 * `entries` entries over the same data: deflated zeros (`deflate`, a bomb as well) or stored bytes
 * that do not compress (`stored`, so only the sharing is wrong).
 */
export function overlappingZip(entries: number, entryBytes: number, data: 'deflate' | 'stored'): Buffer {
  checkZip32(entryBytes, 'entryBytes');
  const names = Array.from({ length: entries }, (_, index) => `part-${index + 1}.bin`);
  if (data === 'deflate') return sharedDataZip(names, deflatedZerosItem(entryBytes));
  const bytes = incompressible(entryBytes);
  return sharedDataZip(names, { method: 0, data: bytes, crc: zlib.crc32(bytes) >>> 0, size: bytes.length });
}

/** Deterministic bytes that do not compress (a SHA-256 chain). */
function incompressible(size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let state = createHash('sha256').update('simulator').digest();
  for (let offset = 0; offset < size; offset += state.length) {
    state.copy(out, offset);
    state = createHash('sha256').update(state).digest();
  }
  return out;
}

/**
 * Byte ranges of one stored S3 object version, for yauzl's central-directory reader and for the
 * single streaming pass over the entries. The tail (end record and central directory) is fetched
 * once and served from memory, so reading a directory of thousands of entries costs two ranged
 * GETs, not two per entry: at Lambda's 10-30 ms per S3 request that is what keeps a 10,000-entry
 * archive's check inside the function's timeout. An S3 failure is kept apart from ZIP problems.
 */
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import * as yauzl from 'yauzl';

export interface StoredObjectRef {
  readonly bucket: string;
  readonly key: string;
  readonly versionId?: string;
  readonly size: number;
}

/**
 * The most of the object's tail kept in memory: a central directory of 10,000 entries with long
 * names is about 1 MiB. A directory declared larger is read in ranges as it is asked for.
 */
export const MAX_CACHED_TAIL_BYTES = 8 * 1024 * 1024;

export class S3RangeReader extends yauzl.RandomAccessReader {
  ioError: unknown;
  /** Ranged GETs sent (the streaming pass included). */
  requests = 0;
  private tail: { start: number; bytes: Buffer } | undefined;

  constructor(
    private readonly s3: S3Client,
    readonly object: StoredObjectRef,
  ) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    if (end <= start) return Readable.from([]);
    const cached = this.fromTail(start, end);
    if (cached !== undefined) return Readable.from([cached]);
    // yauzl asks first for the end record (the object's last bytes), then for the central
    // directory that ends where the tail starts: both are kept, as one contiguous tail.
    const extendsTail =
      this.tail === undefined ? end === this.object.size : end <= this.tail.start + this.tail.bytes.length;
    const tailStart = this.tail?.start ?? this.object.size;
    if (extendsTail && this.object.size - start <= MAX_CACHED_TAIL_BYTES) {
      const out = new PassThrough();
      this.collect(start, tailStart).then(
        (bytes) => {
          this.tail = { start, bytes: this.tail ? Buffer.concat([bytes, this.tail.bytes]) : bytes };
          out.end(this.fromTail(start, end));
        },
        (error) => this.fail(out, error),
      );
      return out;
    }
    return this.stream(start, end);
  }

  /** `[start, end)` as it arrives: one GET. */
  stream(start: number, end: number): Readable {
    const out = new PassThrough();
    this.requests += 1;
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

  private async collect(start: number, end: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.stream(start, end)) chunks.push(chunk as Buffer);
    if (this.ioError !== undefined) throw this.ioError;
    return Buffer.concat(chunks);
  }

  private fromTail(start: number, end: number): Buffer | undefined {
    if (this.tail === undefined || start < this.tail.start) return undefined;
    if (end > this.tail.start + this.tail.bytes.length) return undefined;
    return this.tail.bytes.subarray(start - this.tail.start, end - this.tail.start);
  }

  fail(out: PassThrough, error: unknown): void {
    this.ioError ??= error;
    out.destroy(error as Error);
  }
}

/**
 * Streams a body of unknown length into S3 with bounded memory, computing its SHA-256 and byte count
 * on the way, and stores the SHA-256 as the object's `sha256` user metadata.
 *
 * How the digest gets into the metadata (it is only known once the last byte has passed, while
 * metadata is fixed when an upload starts):
 *
 * - Bodies smaller than one part (almost every report, log and debug output) are buffered anyway by
 *   a multipart uploader; here they are sent with a single PutObject that already carries the digest
 *   as metadata and as `ChecksumSHA256`, so S3 itself verifies the bytes. One write, one version.
 * - Larger bodies go through `@aws-sdk/lib-storage` multipart (part size x queue size bounds memory),
 *   then a CopyObject onto the same key with `MetadataDirective: REPLACE` adds the metadata. S3 copies
 *   server-side: no byte passes through the Lambda again, it costs one request. Trade-offs: the object
 *   is briefly visible without `sha256` (readers wait for manifest.json anyway), and a versioned
 *   bucket keeps the pre-copy version as a noncurrent one (expire noncurrent versions under scans/
 *   with a lifecycle rule). `CopySourceIfMatch` pins the copy to the bytes we just wrote.
 * - CopyObject stops at 5 GiB; above that the digest goes into an object tag `sha256` instead (a
 *   multipart copy would be needed for metadata). The returned `sha256` is correct either way, and the
 *   manifest carries it for every object.
 * - S3's native `ChecksumAlgorithm: 'SHA256'` is no substitute for multipart objects: it yields a
 *   checksum of the part checksums, not the SHA-256 of the object.
 *
 * When the body fails part-way (reset, idle timeout, truncation), nothing is left behind: the single
 * PutObject is never sent, and a multipart upload is aborted (`leavePartsOnError: false`). The body's
 * own error is rethrown, never the S3 error a failed abort may cause.
 */
import { createHash, type Hash } from 'node:crypto';
import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

export const DEFAULT_PART_SIZE_BYTES = 8 * 1024 * 1024;
export const DEFAULT_QUEUE_SIZE = 2;
/** CopyObject's limit for a single request. */
export const MAX_COPY_OBJECT_BYTES = 5 * 1024 * 1024 * 1024;

export interface StreamToS3Options {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly key: string;
  readonly body: Readable;
  readonly contentType: string;
  /** Set when the bytes are stored still encoded (an encoding the reader did not decode). */
  readonly contentEncoding?: string;
  /** User metadata (ASCII values); `sha256` is added. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** @default 8 MiB (S3's minimum is 5 MiB) */
  readonly partSizeBytes?: number;
  /** Parts in flight at once. @default 2 */
  readonly queueSize?: number;
  /** When known, a body of another length is an error and nothing is stored. */
  readonly expectedBytes?: number;
  /** Turns an error of the body (not of S3) into the caller's typed error. */
  readonly mapSourceError?: (error: unknown) => Error;
  /**
   * Where a multipart upload is written before it is proven complete. Set it and `key` only ever
   * holds a verified object: the parts go here, the server-side copy that adds the sha256 puts
   * the verified bytes at `key`, and this object is deleted. (Above CopyObject's 5 GiB limit the
   * upload goes to `key` itself and the digest becomes a tag: a documented exception.)
   * @default - multipart uploads write `key` directly
   */
  readonly stagingKey?: string;
  /**
   * Record the digest on a multipart object (a copy onto itself, or a tag). Off for an upload the
   * caller copies elsewhere anyway and records the digest then: one server-side copy instead of two.
   * Single PutObjects always carry it. @default true
   */
  readonly recordDigest?: boolean;
}

export interface StreamToS3Result {
  readonly bucket: string;
  readonly key: string;
  readonly size: number;
  /** Lower-case hex SHA-256 of the stored bytes. */
  readonly sha256: string;
  readonly etag: string | undefined;
  readonly versionId: string | undefined;
  /** How the object was written (see the module comment). */
  readonly method: 'put' | 'multipart' | 'multipart+copy' | 'multipart+tag';
}

/** The error a body of the wrong length fails with (see `expectedBytes`). */
export class BodyLengthMismatchError extends Error {
  readonly expectedBytes: number;
  readonly actualBytes: number;
  constructor(expectedBytes: number, actualBytes: number) {
    super(`the body had ${actualBytes} bytes, ${expectedBytes} were announced`);
    this.name = 'BodyLengthMismatchError';
    this.expectedBytes = expectedBytes;
    this.actualBytes = actualBytes;
  }
}

/** A pass-through that counts bytes and hashes them with SHA-256 as they flow. */
export class HashingCounter extends Transform {
  private readonly hash: Hash = createHash('sha256');
  private count = 0;
  private digest: string | undefined;
  private readonly expectedBytes: number | undefined;

  constructor(options?: { expectedBytes?: number }) {
    super();
    this.expectedBytes = options?.expectedBytes;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk);
    this.count += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.expectedBytes !== undefined && this.count !== this.expectedBytes) {
      callback(new BodyLengthMismatchError(this.expectedBytes, this.count));
      return;
    }
    this.digest = this.hash.digest('hex');
    callback();
  }

  get bytes(): number {
    return this.count;
  }

  /** Available once the stream has ended. */
  get sha256(): string {
    if (this.digest === undefined) throw new Error('HashingCounter: the stream has not ended yet');
    return this.digest;
  }
}

export async function streamToS3(options: StreamToS3Options): Promise<StreamToS3Result> {
  const partSize = options.partSizeBytes ?? DEFAULT_PART_SIZE_BYTES;
  const queueSize = options.queueSize ?? DEFAULT_QUEUE_SIZE;
  const counter = new HashingCounter(
    options.expectedBytes === undefined ? undefined : { expectedBytes: options.expectedBytes },
  );

  // The first error of the body (or of the length check) wins over whatever S3 says afterwards.
  let sourceError: unknown;
  const recordSourceError = (error: unknown): void => {
    sourceError ??= error;
  };
  options.body.once('error', recordSourceError);
  counter.once('error', recordSourceError);
  pipeline(options.body, counter, (error) => {
    if (error) recordSourceError(error);
  });
  const chunks = counter[Symbol.asyncIterator]() as AsyncIterator<Buffer>;

  let remainder: Readable | undefined;
  try {
    // Read up to one part. If the body ends first, one PutObject with the digest is enough.
    const head: Buffer[] = [];
    let headBytes = 0;
    let ended = false;
    while (headBytes < partSize) {
      const next = await chunks.next();
      if (next.done) {
        ended = true;
        break;
      }
      head.push(next.value);
      headBytes += next.value.length;
    }

    if (ended) return await putWhole(options, Buffer.concat(head, headBytes), counter.sha256);

    remainder = Readable.from(replay(head, chunks), { objectMode: false });
    return await uploadMultipart(options, remainder, counter, { partSize, queueSize });
  } catch (error) {
    throw sourceError === undefined ? error : mapSource(options, sourceError);
  } finally {
    // Releases the vendor connection when S3 failed first; a no-op after a complete read.
    remainder?.destroy();
    counter.destroy();
    options.body.destroy();
    options.body.off('error', recordSourceError);
    // A late error after destroy() must not become an unhandled 'error' event.
    options.body.on('error', () => {});
    counter.on('error', () => {});
  }
}

async function putWhole(
  options: StreamToS3Options,
  bytes: Buffer,
  sha256: string,
): Promise<StreamToS3Result> {
  const result = await options.s3.send(
    new PutObjectCommand({
      Bucket: options.bucket,
      Key: options.key,
      Body: bytes,
      ContentLength: bytes.length,
      ContentType: options.contentType,
      ...(options.contentEncoding ? { ContentEncoding: options.contentEncoding } : {}),
      Metadata: { ...options.metadata, sha256 },
      // S3 recomputes this and refuses the write on a mismatch: end-to-end integrity for free.
      ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64'),
    }),
  );
  return {
    bucket: options.bucket,
    key: options.key,
    size: bytes.length,
    sha256,
    etag: result.ETag,
    versionId: result.VersionId,
    method: 'put',
  };
}

async function uploadMultipart(
  options: StreamToS3Options,
  body: Readable,
  counter: HashingCounter,
  config: { partSize: number; queueSize: number },
): Promise<StreamToS3Result> {
  const uploadKey = options.stagingKey ?? options.key;
  const upload = new Upload({
    client: options.s3,
    params: {
      Bucket: options.bucket,
      Key: uploadKey,
      Body: body,
      ContentType: options.contentType,
      ...(options.contentEncoding ? { ContentEncoding: options.contentEncoding } : {}),
      Metadata: { ...options.metadata },
    },
    partSize: config.partSize,
    queueSize: config.queueSize,
    leavePartsOnError: false,
  });
  const uploaded = await upload.done();
  const size = counter.bytes;
  const sha256 = counter.sha256;
  if (options.recordDigest === false && uploadKey === options.key) {
    return {
      bucket: options.bucket,
      key: options.key,
      size,
      sha256,
      etag: uploaded.ETag,
      versionId: uploaded.VersionId,
      method: 'multipart',
    };
  }

  if (size > MAX_COPY_OBJECT_BYTES) {
    if (uploadKey !== options.key) {
      throw new Error(
        `${options.key}: ${size} bytes is over CopyObject's limit, so a staged upload cannot be promoted; upload it without stagingKey`,
      );
    }
    await options.s3.send(
      new PutObjectTaggingCommand({
        Bucket: options.bucket,
        Key: options.key,
        ...(uploaded.VersionId ? { VersionId: uploaded.VersionId } : {}),
        Tagging: { TagSet: [{ Key: 'sha256', Value: sha256 }] },
      }),
    );
    return {
      bucket: options.bucket,
      key: options.key,
      size,
      sha256,
      etag: uploaded.ETag,
      versionId: uploaded.VersionId,
      method: 'multipart+tag',
    };
  }

  const copied = await options.s3.send(
    new CopyObjectCommand({
      Bucket: options.bucket,
      Key: options.key,
      CopySource: copySource(options.bucket, uploadKey, uploaded.VersionId),
      ...(uploaded.ETag ? { CopySourceIfMatch: uploaded.ETag } : {}),
      MetadataDirective: 'REPLACE',
      // REPLACE replaces the system metadata too: restate what the upload set.
      ContentType: options.contentType,
      ...(options.contentEncoding ? { ContentEncoding: options.contentEncoding } : {}),
      Metadata: { ...options.metadata, sha256 },
    }),
  );
  if (uploadKey !== options.key) {
    // The verified copy is in place; the staged bytes have served their purpose.
    await options.s3.send(new DeleteObjectCommand({ Bucket: options.bucket, Key: uploadKey }));
  }
  return {
    bucket: options.bucket,
    key: options.key,
    size,
    sha256,
    etag: copied.CopyObjectResult?.ETag ?? uploaded.ETag,
    versionId: copied.VersionId,
    method: 'multipart+copy',
  };
}

/** The buffered head first, then the rest of the body, pulled only as the uploader reads. */
async function* replay(head: Buffer[], rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield* head;
  head.length = 0;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

export function copySource(bucket: string, key: string, versionId: string | undefined): string {
  const path = `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  return versionId ? `${path}?versionId=${encodeURIComponent(versionId)}` : path;
}

function mapSource(options: StreamToS3Options, error: unknown): unknown {
  return options.mapSourceError ? options.mapSourceError(error) : error;
}

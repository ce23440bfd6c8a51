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
 *   to `stagingKey` when set, then a server-side multipart copy (promote.ts, which says why not
 *   CopyObject) puts them at `key` with the digest in the metadata, whatever their size: no byte
 *   passes through the Lambda again. The copy completes only if `key` holds nothing (staged) or
 *   still holds the upload it replaces (in place), and each part is pinned to the uploaded version.
 *   The staged (or, in place, the pre-copy) version is then deleted by its version id, so a
 *   versioned bucket keeps no noncurrent copy of every large output.
 * - S3's native `ChecksumAlgorithm: 'SHA256'` is no substitute for multipart objects: it yields a
 *   checksum of the part checksums, not the SHA-256 of the object.
 *
 * When the body fails part-way (reset, idle timeout, truncation), nothing is left behind: the single
 * PutObject is never sent, and a multipart upload is aborted (`leavePartsOnError: false`). The body's
 * own error is rethrown, never the S3 error a failed abort may cause.
 */
import { createHash, type Hash } from 'node:crypto';
import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { promoteVerified } from './promote.ts';

export { MAX_COPY_OBJECT_BYTES } from './limits.ts';
export { copySource, DestinationTakenError } from './promote.ts';

export const DEFAULT_PART_SIZE_BYTES = 8 * 1024 * 1024;
export const DEFAULT_QUEUE_SIZE = 2;

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
   * the verified bytes at `key` (only if `key` holds no object, so a verified object is never
   * replaced), and this object's version is deleted.
   * @default - multipart uploads write `key` directly, and the copy replaces them in place
   */
  readonly stagingKey?: string;
  /**
   * Record the digest on a multipart object (the copy). Off for an upload the caller copies
   * elsewhere anyway and records the digest then: one server-side copy instead of two.
   * Single PutObjects always carry it. @default true
   */
  readonly recordDigest?: boolean;
  /**
   * Bytes per part of the server-side copy (S3: 5 MiB to 5 GiB, at most 10,000 parts).
   * @default 512 MiB (promote.ts)
   */
  readonly copyPartSizeBytes?: number;
  /** Parts copied at once. @default 4 */
  readonly copyQueueSize?: number;
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
  readonly method: 'put' | 'multipart' | 'multipart+copy';
  /** Parts of the server-side copy (method `multipart+copy`). */
  readonly copyParts?: number;
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

  const staged = uploadKey !== options.key;
  if (!staged && uploaded.ETag === undefined) {
    throw new Error(
      `${options.key}: the upload returned no ETag, so its in-place copy cannot be conditional`,
    );
  }
  const promoted = await promoteVerified({
    s3: options.s3,
    bucket: options.bucket,
    key: options.key,
    source: { key: uploadKey, versionId: uploaded.VersionId, etag: uploaded.ETag, size },
    contentType: options.contentType,
    ...(options.contentEncoding ? { contentEncoding: options.contentEncoding } : {}),
    metadata: { ...options.metadata, sha256 },
    expect: staged ? 'absent' : { etag: uploaded.ETag as string },
    ...(options.copyPartSizeBytes === undefined ? {} : { partSizeBytes: options.copyPartSizeBytes }),
    ...(options.copyQueueSize === undefined ? {} : { queueSize: options.copyQueueSize }),
  }).catch(async (error: unknown) => {
    // The staged bytes are of no use once their promotion failed; the in-place upload stays, as
    // the unverified leftover a retry removes.
    if (staged) await deleteExactly(options, uploadKey, uploaded.VersionId).catch(() => undefined);
    throw error;
  });
  // The verified copy is in place. The uploaded version is deleted by its id: a plain delete in a
  // versioned bucket only adds a delete marker and keeps every byte as a noncurrent version. In
  // place without a version id (an unversioned bucket) there is nothing left to delete.
  if (staged || (uploaded.VersionId !== undefined && uploaded.VersionId !== promoted.versionId)) {
    await deleteExactly(options, uploadKey, uploaded.VersionId);
  }
  return {
    bucket: options.bucket,
    key: options.key,
    size,
    sha256,
    etag: promoted.etag,
    versionId: promoted.versionId,
    method: 'multipart+copy',
    copyParts: promoted.parts,
  };
}

/** Deletes that version (or, unversioned, the object): never a delete marker over it. */
function deleteExactly(options: StreamToS3Options, key: string, versionId: string | undefined) {
  return options.s3.send(
    new DeleteObjectCommand({
      Bucket: options.bucket,
      Key: key,
      ...(versionId === undefined ? {} : { VersionId: versionId }),
    }),
  );
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

function mapSource(options: StreamToS3Options, error: unknown): unknown {
  return options.mapSourceError ? options.mapSourceError(error) : error;
}

/**
 * Puts bytes that were already stored and verified at their final key, with metadata that could
 * only be known once they had been read (their sha256): a multipart copy, server-side, in parts.
 *
 * Why a multipart copy (CreateMultipartUpload, UploadPartCopy per range, CompleteMultipartUpload):
 *
 * - CopyObject stops at 5 GiB; larger objects can only be copied in parts of at most 5 GiB
 *   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/CopyingObjctsMPUapi.html,
 *   https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html). One path for every size
 *   means the path that large outputs take is the one every local run and test exercises.
 * - A multipart upload straight to the final key would keep the bytes invisible until they are
 *   verified, but an upload's metadata is fixed by CreateMultipartUpload, before the digest is known:
 *   the object would land without its `sha256`, and "verified" (what a retried fetch keeps, what
 *   manifests and readers rely on) would have to move to a tag written after completion, not
 *   atomically with it. The copy's CreateMultipartUpload already knows the digest.
 * - CompleteMultipartUpload takes S3's conditional-write headers: `If-None-Match: *` completes only
 *   if the key holds no object, `If-Match: <etag>` only if it still holds that one
 *   (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html). A verified
 *   object another attempt stored meanwhile is never replaced. CreateMultipartUpload and
 *   UploadPartCopy take no such header; each part pins its source with `x-amz-copy-source-if-match`.
 * - Nothing is visible at the key before the completion; on any failure the copy upload is aborted
 *   (and the bucket's abort-incomplete-multipart-uploads rule catches a crash).
 *
 * The cost over one CopyObject is two requests (create and complete) per promotion.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  type S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';

const MiB = 1024 * 1024;
/** S3's smallest part (all but the last). */
export const MIN_COPY_PART_BYTES = 5 * MiB;
/** S3's largest part, and CopyObject's largest object. */
export const MAX_COPY_PART_BYTES = 5 * 1024 * MiB;
/** S3's most parts in one upload. */
export const MAX_PARTS = 10_000;
/** Parts copied at once: S3 copies each one server-side, so several in flight shorten the copy. */
export const DEFAULT_COPY_QUEUE_SIZE = 4;
/** Small enough that a multi-GiB copy runs in parallel, large enough for 5 TiB in 10,000 parts. */
export const DEFAULT_COPY_PART_BYTES = 512 * MiB;

export interface PromoteOptions {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly key: string;
  /** The verified bytes: key, version (when the bucket is versioned), ETag and size. */
  readonly source: {
    readonly key: string;
    readonly versionId: string | undefined;
    readonly etag: string | undefined;
    readonly size: number;
  };
  readonly contentType: string;
  readonly contentEncoding?: string;
  readonly metadata: Readonly<Record<string, string>>;
  /**
   * `absent`: the key must hold no object (If-None-Match: *). `{ etag }`: it must still hold
   * the object with that ETag (If-Match), e.g. the unverified upload being replaced in place.
   */
  readonly expect: 'absent' | { readonly etag: string };
  /** @default DEFAULT_COPY_PART_BYTES; raised when the object would need more than 10,000 parts */
  readonly partSizeBytes?: number;
  /** @default DEFAULT_COPY_QUEUE_SIZE */
  readonly queueSize?: number;
}

export interface PromoteResult {
  readonly etag: string | undefined;
  readonly versionId: string | undefined;
  readonly parts: number;
}

/** The key did not hold what the promotion expected: another writer got there first. */
export class DestinationTakenError extends Error {
  readonly key: string;
  constructor(key: string, cause: unknown) {
    super(`${key}: another object was stored there while this one was being promoted`, { cause });
    this.name = 'DestinationTakenError';
    this.key = key;
  }
}

export async function promoteVerified(options: PromoteOptions): Promise<PromoteResult> {
  const ranges = copyRanges(options.source.size, options.partSizeBytes ?? DEFAULT_COPY_PART_BYTES);
  const queueSize = options.queueSize ?? DEFAULT_COPY_QUEUE_SIZE;
  if (!Number.isInteger(queueSize) || queueSize < 1) {
    throw new Error(`promote ${options.key}: queueSize must be a whole number >= 1, got ${queueSize}`);
  }
  const created = await options.s3.send(
    new CreateMultipartUploadCommand({
      Bucket: options.bucket,
      Key: options.key,
      ContentType: options.contentType,
      ...(options.contentEncoding ? { ContentEncoding: options.contentEncoding } : {}),
      Metadata: { ...options.metadata },
    }),
  );
  const uploadId = created.UploadId;
  if (!uploadId) throw new Error(`promote ${options.key}: CreateMultipartUpload returned no UploadId`);
  try {
    const etags = await copyParts(options, uploadId, ranges, queueSize);
    const completed = await options.s3
      .send(
        new CompleteMultipartUploadCommand({
          Bucket: options.bucket,
          Key: options.key,
          UploadId: uploadId,
          MultipartUpload: { Parts: etags.map((ETag, i) => ({ PartNumber: i + 1, ETag })) },
          ...(options.expect === 'absent' ? { IfNoneMatch: '*' } : { IfMatch: options.expect.etag }),
        }),
      )
      .catch((error: unknown) => {
        throw isPreconditionFailure(error) ? new DestinationTakenError(options.key, error) : error;
      });
    return { etag: completed.ETag, versionId: completed.VersionId, parts: ranges.length };
  } catch (error) {
    // The parts are billed until aborted; the abort's own failure must not hide the cause.
    await options.s3
      .send(new AbortMultipartUploadCommand({ Bucket: options.bucket, Key: options.key, UploadId: uploadId }))
      .catch(() => undefined);
    throw error;
  }
}

/**
 * Inclusive byte ranges of at most `partSize` bytes covering `size`, the part size raised (to
 * whole MiB) when 10,000 parts would not cover the object.
 */
export function copyRanges(size: number, partSize: number): [number, number][] {
  if (!Number.isInteger(partSize) || partSize < MIN_COPY_PART_BYTES || partSize > MAX_COPY_PART_BYTES) {
    throw new Error(
      `copy part size must be a whole number of bytes between ${MIN_COPY_PART_BYTES} and ${MAX_COPY_PART_BYTES} (S3's part limits), got ${partSize}`,
    );
  }
  if (!Number.isInteger(size) || size < 1) {
    throw new Error(`a multipart copy needs at least one byte to copy, got ${size}`);
  }
  const needed = Math.ceil(Math.ceil(size / MAX_PARTS) / MiB) * MiB;
  const part = Math.max(partSize, needed);
  if (part > MAX_COPY_PART_BYTES) {
    throw new Error(`${size} bytes is over S3's largest object (${MAX_PARTS} parts of 5 GiB)`);
  }
  const ranges: [number, number][] = [];
  for (let start = 0; start < size; start += part) ranges.push([start, Math.min(size, start + part) - 1]);
  return ranges;
}

async function copyParts(
  options: PromoteOptions,
  uploadId: string,
  ranges: readonly [number, number][],
  queueSize: number,
): Promise<string[]> {
  const etags: string[] = new Array(ranges.length);
  const source = copySource(options.bucket, options.source.key, options.source.versionId);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < ranges.length) {
      const index = next++;
      const [first, last] = ranges[index] as [number, number];
      try {
        const copied = await options.s3.send(
          new UploadPartCopyCommand({
            Bucket: options.bucket,
            Key: options.key,
            UploadId: uploadId,
            PartNumber: index + 1,
            CopySource: source,
            CopySourceRange: `bytes=${first}-${last}`,
            ...(options.source.etag ? { CopySourceIfMatch: options.source.etag } : {}),
          }),
        );
        const etag = copied.CopyPartResult?.ETag;
        if (!etag)
          throw new Error(`promote ${options.key}: UploadPartCopy of part ${index + 1} returned no ETag`);
        etags[index] = etag;
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  // Every worker settles before the caller aborts: no part copy lands after the abort.
  const settled = await Promise.allSettled(
    Array.from({ length: Math.min(queueSize, ranges.length) }, worker),
  );
  const rejected = settled.find((outcome) => outcome.status === 'rejected');
  if (rejected) throw rejected.reason;
  return etags;
}

/**
 * S3 refused a conditional write: the key no longer holds what the writer expected (412 when the
 * condition is false; 409 when a concurrent conditional write to the key raced this one).
 */
export function isPreconditionFailure(error: unknown): boolean {
  const e = error as { name?: unknown; $metadata?: { httpStatusCode?: unknown } } | undefined;
  const status = e?.$metadata?.httpStatusCode;
  return (
    e?.name === 'PreconditionFailed' ||
    e?.name === 'ConditionalRequestConflict' ||
    status === 412 ||
    status === 409
  );
}

export function copySource(bucket: string, key: string, versionId: string | undefined): string {
  const path = `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  return versionId ? `${path}?versionId=${encodeURIComponent(versionId)}` : path;
}

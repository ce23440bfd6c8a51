/**
 * Stores a vendor download in S3 through `streamToS3`: one place that turns a `VendorDownload`
 * (its Content-Type, encoding, declared length) into stored bytes with their SHA-256, and a
 * failing body into the vendor error Step Functions retries. Scan outputs and breach archives
 * both go through it.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { VendorError, VendorNetworkError } from '#lambdas/platform/errors';
import type { UploadSettings } from '#lambdas/platform/runtime/settings';
import type { VendorDownload } from '#lambdas/vendor-api/transport/types';
import { BodyLengthMismatchError, type StreamToS3Result, streamToS3 } from './stream-upload.ts';

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export interface StoreDownloadOptions {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly key: string;
  /** The vendor operation that opened the download: names the error when its body fails. */
  readonly operation: string;
  readonly upload: UploadSettings;
  /** User metadata (ASCII); `sha256` is added. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** See `StreamToS3Options.stagingKey`. */
  readonly stagingKey?: string;
  /** See `StreamToS3Options.recordDigest`. @default true */
  readonly recordDigest?: boolean;
}

export type StoredDownload = StreamToS3Result & { readonly contentType: string };

export async function storeDownload(
  download: VendorDownload,
  options: StoreDownloadOptions,
): Promise<StoredDownload> {
  const contentType = download.contentType?.trim() || DEFAULT_CONTENT_TYPE;
  const stored = await streamToS3({
    s3: options.s3,
    bucket: options.bucket,
    key: options.key,
    body: download.body,
    contentType,
    // Set only for an encoding the client could not decode: the bytes are stored as sent, labelled.
    ...(download.contentEncoding ? { contentEncoding: download.contentEncoding } : {}),
    ...(options.metadata ? { metadata: options.metadata } : {}),
    ...(options.stagingKey ? { stagingKey: options.stagingKey } : {}),
    ...(options.recordDigest === false ? { recordDigest: false } : {}),
    partSizeBytes: options.upload.partSizeBytes,
    queueSize: options.upload.queueSize,
    ...(options.upload.copyPartSizeBytes === undefined
      ? {}
      : { copyPartSizeBytes: options.upload.copyPartSizeBytes }),
    ...(download.contentLength === undefined ? {} : { expectedBytes: download.contentLength }),
    // The vendor client already types its body errors; anything else (a length mismatch seen here,
    // a raw socket error from another client) is still the vendor's body failing, and Step
    // Functions retries VendorNetworkError.
    mapSourceError: (error) =>
      error instanceof VendorError
        ? error
        : new VendorNetworkError({
            operation: options.operation,
            code: sourceErrorCode(error),
            requestNotSent: false,
            cause: error,
          }),
  });
  return { ...stored, contentType };
}

function sourceErrorCode(error: unknown): string | undefined {
  if (error instanceof BodyLengthMismatchError) return 'TRUNCATED_BODY';
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** S3 metadata travels as HTTP headers: keep visible ASCII only, and not too much of it. */
export function headerSafe(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const cleaned = value
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, 256);
  return cleaned === '' ? undefined : cleaned;
}

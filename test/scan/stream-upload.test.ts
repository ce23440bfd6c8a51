import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VendorNetworkError } from '#lambdas/platform/errors';
import { BodyLengthMismatchError, streamToS3 } from '#lambdas/platform/s3/stream-upload';
import { recordS3Commands, type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { listKeys, objectExists } from '../kit/s3.ts';
import { RESULTS_BUCKET, s3ObjectDigest } from './fixture.ts';

const MiB = 1024 * 1024;
const PART = 5 * MiB;

let s3: S3rverFixture;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
});

afterAll(async () => {
  await s3.close();
});

/** Deterministic bytes, yielded in uneven chunks so part boundaries never line up with chunks. */
function* pattern(total: number, seed = 1): Generator<Buffer> {
  let produced = 0;
  let chunk = 0;
  while (produced < total) {
    const size = Math.min(total - produced, 100_000 + ((chunk * 7919) % 90_000));
    const buffer = Buffer.alloc(size);
    for (let i = 0; i < size; i++) buffer[i] = (produced + i + seed) % 251;
    produced += size;
    chunk++;
    yield buffer;
  }
}

function sha256Of(chunks: Iterable<Buffer>): string {
  const hash = createHash('sha256');
  for (const chunk of chunks) hash.update(chunk);
  return hash.digest('hex');
}

/** A body that sends `bytes` of the pattern and then fails with `error`. */
function failingBody(bytes: number, error: Error): Readable {
  async function* generate(): AsyncGenerator<Buffer> {
    yield* pattern(bytes);
    throw error;
  }
  return Readable.from(generate(), { objectMode: false });
}

describe('streamToS3', () => {
  it('writes a body smaller than one part with a single PutObject carrying the sha256 metadata', async () => {
    // Prepare
    const client = s3.createClient();
    const commands = recordS3Commands(client);
    const key = 'stream/small.json';

    // Act
    const result = await streamToS3({
      s3: client,
      bucket: RESULTS_BUCKET,
      key,
      body: Readable.from(pattern(300_000)),
      contentType: 'application/json',
      metadata: { domain: 'example.com' },
      partSizeBytes: PART,
    });

    // Assess
    const stored = await s3ObjectDigest(client, key);
    expect(result).toMatchObject({ key, size: 300_000, sha256: sha256Of(pattern(300_000)), method: 'put' });
    expect(stored).toMatchObject({ sha256: result.sha256, size: 300_000, contentType: 'application/json' });
    expect(stored.metadata).toEqual({ domain: 'example.com', sha256: result.sha256 });
    expect(commands.filter((c) => c !== 'GetObjectCommand')).toEqual(['PutObjectCommand']);
  });

  it('uploads a multi-part body, then adds the sha256 metadata with a server-side copy', async () => {
    // Prepare
    const client = s3.createClient();
    const commands = recordS3Commands(client);
    const size = 12 * MiB + 12_345;
    const key = 'stream/large.txt';

    // Act
    const result = await streamToS3({
      s3: client,
      bucket: RESULTS_BUCKET,
      key,
      body: Readable.from(pattern(size, 7)),
      contentType: 'text/plain; charset=utf-8',
      metadata: { 'scan-uuid': 'abc' },
      partSizeBytes: PART,
      queueSize: 2,
    });

    // Assess
    const stored = await s3ObjectDigest(client, key);
    expect(result).toMatchObject({ size, sha256: sha256Of(pattern(size, 7)), method: 'multipart+copy' });
    expect(stored).toMatchObject({ sha256: result.sha256, size, contentType: 'text/plain; charset=utf-8' });
    expect(stored.metadata).toEqual({ 'scan-uuid': 'abc', sha256: result.sha256 });
    expect(commands).toContain('CreateMultipartUploadCommand');
    expect(commands).toContain('CompleteMultipartUploadCommand');
    expect(commands).toContain('UploadPartCopyCommand');
    expect(commands).not.toContain('CopyObjectCommand');
  });

  it('stores an empty body as an empty object with the sha256 of nothing', async () => {
    const result = await streamToS3({
      s3: s3.client,
      bucket: RESULTS_BUCKET,
      key: 'stream/empty.bin',
      body: Readable.from([]),
      contentType: 'application/octet-stream',
    });
    expect(result).toMatchObject({ size: 0, sha256: createHash('sha256').digest('hex'), method: 'put' });
    expect(await objectExists(s3.client, RESULTS_BUCKET, 'stream/empty.bin')).toBe(true);
  });

  it('rethrows the body error and sends nothing to S3 when a small body fails', async () => {
    // Prepare
    const client = s3.createClient();
    const commands = recordS3Commands(client);
    const cause = new VendorNetworkError({
      operation: 'scan.getReport',
      code: 'ECONNRESET',
      requestNotSent: false,
    });

    // Act
    const attempt = streamToS3({
      s3: client,
      bucket: RESULTS_BUCKET,
      key: 'stream/failed-small.json',
      body: failingBody(200_000, cause),
      contentType: 'application/json',
      partSizeBytes: PART,
    });

    // Assess
    await expect(attempt).rejects.toBe(cause);
    expect(commands).toEqual([]);
    expect(await objectExists(s3.client, RESULTS_BUCKET, 'stream/failed-small.json')).toBe(false);
  });

  it('aborts the multipart upload and rethrows the body error (not the S3 one) when a large body fails', async () => {
    // Prepare
    const client = s3.createClient();
    const commands = recordS3Commands(client);
    const cause = new VendorNetworkError({
      operation: 'scan.getReport',
      code: 'ECONNRESET',
      requestNotSent: false,
    });

    // Act
    const attempt = streamToS3({
      s3: client,
      bucket: RESULTS_BUCKET,
      key: 'stream/failed-large.json',
      body: failingBody(11 * MiB, cause),
      contentType: 'application/json',
      partSizeBytes: PART,
    });

    // Assess: s3rver answers AbortMultipartUpload with MethodNotAllowed; AWS deletes the parts.
    await expect(attempt).rejects.toBe(cause);
    expect(commands).toContain('UploadPartCommand');
    expect(commands).toContain('AbortMultipartUploadCommand');
    expect(commands).not.toContain('CompleteMultipartUploadCommand');
    expect(await listKeys(s3.client, RESULTS_BUCKET, 'stream/failed-large')).toEqual([]);
  });

  it('refuses a body shorter than announced and stores nothing', async () => {
    // Act
    const attempt = streamToS3({
      s3: s3.client,
      bucket: RESULTS_BUCKET,
      key: 'stream/short.bin',
      body: Readable.from(pattern(1000)),
      contentType: 'application/octet-stream',
      expectedBytes: 2000,
      mapSourceError: (error) =>
        new VendorNetworkError({
          operation: 'test',
          code: 'TRUNCATED_BODY',
          requestNotSent: false,
          cause: error,
        }),
    });

    // Assess
    const error = await attempt.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VendorNetworkError);
    expect((error as VendorNetworkError).cause).toBeInstanceOf(BodyLengthMismatchError);
    expect(await objectExists(s3.client, RESULTS_BUCKET, 'stream/short.bin')).toBe(false);
  });

  it('rethrows the S3 error when S3 refuses the write, and releases the body', async () => {
    // Prepare
    const body = Readable.from(pattern(7 * MiB));

    // Act
    const attempt = streamToS3({
      s3: s3.client,
      bucket: 'no-such-bucket',
      key: 'x.bin',
      body,
      contentType: 'application/octet-stream',
      partSizeBytes: PART,
    });

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'NoSuchBucket' });
    expect(body.destroyed).toBe(true);
  });

  it('keeps the stored object readable with its content type after the metadata copy', async () => {
    // Act
    await streamToS3({
      s3: s3.client,
      bucket: RESULTS_BUCKET,
      key: 'stream/copy-check.ndjson',
      body: Readable.from(pattern(6 * MiB)),
      contentType: 'application/x-ndjson',
      partSizeBytes: PART,
    });

    // Assess
    const head = await s3.client.send(
      new HeadObjectCommand({ Bucket: RESULTS_BUCKET, Key: 'stream/copy-check.ndjson' }),
    );
    expect(head.ContentType).toBe('application/x-ndjson');
    expect(head.ContentLength).toBe(6 * MiB);
    expect(head.Metadata?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

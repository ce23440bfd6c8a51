/**
 * Outputs over CopyObject's 5 GiB: a low copy part size stands in for the 5 GiB part limit, so
 * the same multipart-copy path runs here in megabytes. Two sides: the embedded S3 (real bytes,
 * request by request), and a stateful mock of the S3 API for what s3rver cannot show (versions,
 * a concurrent writer racing the completion).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DestinationTakenError, streamToS3 } from '#lambdas/platform/s3/stream-upload';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { listKeys } from '../kit/s3.ts';
import { RESULTS_BUCKET, s3ObjectDigest } from './fixture.ts';

const MiB = 1024 * 1024;
let s3: S3rverFixture;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
});

afterAll(async () => {
  await s3.close();
});

function bytes(size: number, seed: number): Buffer {
  const buffer = Buffer.alloc(size);
  for (let i = 0; i < size; i++) buffer[i] = (i * 31 + seed) % 251;
  return buffer;
}

/** Every command with the inputs that matter for the promotion. */
function recordRequests(client: S3Client): Record<string, unknown>[] {
  const requests: Record<string, unknown>[] = [];
  client.middlewareStack.add(
    (next, context) => (args) => {
      const input = args.input as Record<string, unknown>;
      requests.push({
        command: context.commandName,
        key: input.Key,
        ...(input.CopySourceRange ? { range: input.CopySourceRange } : {}),
        ...(input.IfNoneMatch ? { ifNoneMatch: input.IfNoneMatch } : {}),
        ...(input.IfMatch ? { ifMatch: true } : {}),
      });
      return next(args);
    },
    { step: 'initialize', name: 'recordPromotionRequests' },
  );
  return requests;
}

const STAGED = 'promote/.staging/out';

describe.each([
  {
    name: 'staged, 12 MiB in 5 MiB copy parts',
    size: 12 * MiB,
    staged: true,
    ranges: [
      `bytes=0-${5 * MiB - 1}`,
      `bytes=${5 * MiB}-${10 * MiB - 1}`,
      `bytes=${10 * MiB}-${12 * MiB - 1}`,
    ],
  },
  {
    name: 'staged, 6 MiB + 1 byte in 6 MiB copy parts',
    size: 6 * MiB + 1,
    staged: true,
    copyPart: 6 * MiB,
    ranges: [`bytes=0-${6 * MiB - 1}`, `bytes=${6 * MiB}-${6 * MiB}`],
  },
  {
    name: 'in place, 11 MiB in 5 MiB copy parts',
    size: 11 * MiB,
    staged: false,
    ranges: [
      `bytes=0-${5 * MiB - 1}`,
      `bytes=${5 * MiB}-${10 * MiB - 1}`,
      `bytes=${10 * MiB}-${11 * MiB - 1}`,
    ],
  },
])('a multipart body promoted by a multipart copy: $name', ({ size, staged, ranges, copyPart }) => {
  it('copies each range server-side, completes conditionally, and leaves only the verified object', async () => {
    // Prepare
    const client = s3.createClient();
    const requests = recordRequests(client);
    const key = `promote/${size}-${staged}.bin`;
    const body = bytes(size, size % 97);

    // Act
    const result = await streamToS3({
      s3: client,
      bucket: RESULTS_BUCKET,
      key,
      body: Readable.from([body]),
      contentType: 'application/octet-stream',
      metadata: { domain: 'example.com' },
      partSizeBytes: 5 * MiB,
      copyPartSizeBytes: copyPart ?? 5 * MiB,
      ...(staged ? { stagingKey: `${STAGED}-${size}` } : {}),
    });

    // Assess: the bytes, the digest in the metadata, nothing else under the prefix
    const sha256 = createHash('sha256').update(body).digest('hex');
    expect(result).toMatchObject({ key, size, sha256, method: 'multipart+copy', copyParts: ranges.length });
    const stored = await s3ObjectDigest(s3.client, key);
    expect(stored).toMatchObject({ size, sha256 });
    expect(stored.metadata).toEqual({ domain: 'example.com', sha256 });
    expect(await listKeys(s3.client, RESULTS_BUCKET, `promote/${size}-`)).toEqual([key]);
    expect(await listKeys(s3.client, RESULTS_BUCKET, `${STAGED}-${size}`)).toEqual([]);
    // Assess: request by request, after the streamed upload
    const uploadDone = requests.findIndex((r) => r.command === 'CompleteMultipartUploadCommand');
    expect(requests[uploadDone]?.key).toBe(staged ? `${STAGED}-${size}` : key);
    const promotion = requests.slice(uploadDone + 1);
    const copies = promotion.filter((r) => r.command === 'UploadPartCopyCommand');
    expect(copies.map((r) => r.range).sort()).toEqual([...ranges].sort());
    expect(copies.every((r) => r.key === key)).toBe(true);
    const completions = promotion.filter((r) => r.command === 'CompleteMultipartUploadCommand');
    expect(completions.at(-1)).toEqual(
      staged
        ? { command: 'CompleteMultipartUploadCommand', key, ifNoneMatch: '*' }
        : { command: 'CompleteMultipartUploadCommand', key, ifMatch: true },
    );
    expect(promotion.map((r) => r.command)).not.toContain('CopyObjectCommand');
    expect(promotion.filter((r) => r.command === 'DeleteObjectCommand')).toEqual(
      staged ? [{ command: 'DeleteObjectCommand', key: `${STAGED}-${size}` }] : [],
    );
  });
});

describe('a promotion that finds its key taken', () => {
  it('keeps the object already there, aborts the copy and deletes the staged upload (embedded S3)', async () => {
    // Prepare: another attempt's verified object already at the key
    const client = s3.createClient();
    const requests = recordRequests(client);
    const key = 'promote/taken.bin';
    await s3.client.send(
      new PutObjectCommand({
        Bucket: RESULTS_BUCKET,
        Key: key,
        Body: 'first',
        Metadata: { sha256: 'a'.repeat(64) },
      }),
    );

    // Act
    const attempt = streamToS3({
      s3: client,
      bucket: RESULTS_BUCKET,
      key,
      body: Readable.from([bytes(7 * MiB, 3)]),
      contentType: 'application/octet-stream',
      partSizeBytes: 5 * MiB,
      copyPartSizeBytes: 5 * MiB,
      stagingKey: `${STAGED}-taken`,
    });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(DestinationTakenError);
    expect(await s3ObjectDigest(s3.client, key)).toMatchObject({
      size: 5,
      metadata: { sha256: 'a'.repeat(64) },
    });
    expect(await listKeys(s3.client, RESULTS_BUCKET, `${STAGED}-taken`)).toEqual([]);
    expect(requests.map((r) => r.command)).toContain('AbortMultipartUploadCommand');
  });

  it('lets exactly one of ten racing If-None-Match writes to one key through (embedded S3, as on AWS)', async () => {
    // Prepare
    const key = 'promote/raced.txt';
    const write = (n: number) =>
      s3.client.send(
        new PutObjectCommand({ Bucket: RESULTS_BUCKET, Key: key, Body: `writer ${n}`, IfNoneMatch: '*' }),
      );

    // Act
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, n) => write(n)));

    // Assess
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as Error).name] : []));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(refused).toEqual(Array.from({ length: 9 }, () => 'PreconditionFailed'));
  });
});

/**
 * A versioned bucket and a writer that wins the race between the check and the completion: AWS's
 * rules, encoded in a stateful mock (s3rver has no versions).
 */
function versionedBucketMock(options: { takenBeforeCompletion?: boolean } = {}) {
  const client = new S3Client({
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
  });
  const mock = mockClient(client);
  const objects = new Map<string, { versionId: string; etag: string }[]>();
  let versions = 0;
  let uploads = 0;
  const store = (key: string) => {
    const version = { versionId: `v${++versions}`, etag: `"etag-${versions}"` };
    objects.set(key, [...(objects.get(key) ?? []), version]);
    return version;
  };
  mock.on(CreateMultipartUploadCommand).callsFake(async () => ({ UploadId: `upload-${++uploads}` }));
  mock.on(UploadPartCommand).callsFake(async (input) => ({ ETag: `"part-${input.PartNumber}"` }));
  mock
    .on(UploadPartCopyCommand)
    .callsFake(async (input) => ({ CopyPartResult: { ETag: `"copy-${input.PartNumber}"` } }));
  mock.on(CompleteMultipartUploadCommand).callsFake(async (input) => {
    if (options.takenBeforeCompletion && input.IfNoneMatch === '*') store(input.Key);
    if (input.IfNoneMatch === '*' && (objects.get(input.Key)?.length ?? 0) > 0) {
      const error = Object.assign(
        new Error('At least one of the pre-conditions you specified did not hold'),
        {
          name: 'PreconditionFailed',
          $metadata: { httpStatusCode: 412 },
        },
      );
      throw error;
    }
    const version = store(input.Key);
    return { ETag: version.etag, VersionId: version.versionId };
  });
  mock.on(DeleteObjectCommand).callsFake(async (input) => {
    objects.set(
      input.Key,
      (objects.get(input.Key) ?? []).filter((v) => v.versionId !== input.VersionId),
    );
    return {};
  });
  mock.on(AbortMultipartUploadCommand).resolves({});
  return { client, mock, objects };
}

describe('in a versioned bucket (AWS rules, mocked)', () => {
  it('copies from the staged version, pinned by its ETag, and deletes exactly that version', async () => {
    // Prepare
    const { client, mock, objects } = versionedBucketMock();

    // Act
    const result = await streamToS3({
      s3: client,
      bucket: RESULTS_BUCKET,
      key: 'scans/x/report.json',
      body: Readable.from([bytes(11 * MiB, 5)]),
      contentType: 'application/json',
      partSizeBytes: 5 * MiB,
      copyPartSizeBytes: 5 * MiB,
      stagingKey: 'scans/x/.staging/report-1',
    });

    // Assess
    const copies = mock.commandCalls(UploadPartCopyCommand).map((call) => call.args[0].input);
    expect(copies.map((c) => [c.CopySource, c.CopySourceIfMatch, c.CopySourceRange])).toEqual([
      [`${RESULTS_BUCKET}/scans/x/.staging/report-1?versionId=v1`, '"etag-1"', `bytes=0-${5 * MiB - 1}`],
      [
        `${RESULTS_BUCKET}/scans/x/.staging/report-1?versionId=v1`,
        '"etag-1"',
        `bytes=${5 * MiB}-${10 * MiB - 1}`,
      ],
      [
        `${RESULTS_BUCKET}/scans/x/.staging/report-1?versionId=v1`,
        '"etag-1"',
        `bytes=${10 * MiB}-${11 * MiB - 1}`,
      ],
    ]);
    expect(mock.commandCalls(DeleteObjectCommand).map((call) => call.args[0].input)).toEqual([
      { Bucket: RESULTS_BUCKET, Key: 'scans/x/.staging/report-1', VersionId: 'v1' },
    ]);
    expect(objects.get('scans/x/.staging/report-1')).toEqual([]);
    expect(objects.get('scans/x/report.json')).toEqual([{ versionId: 'v2', etag: '"etag-2"' }]);
    expect(result).toMatchObject({ versionId: 'v2', method: 'multipart+copy' });
  });

  it('loses the race to a concurrent writer without replacing its object, and cleans up', async () => {
    // Prepare
    const { client, mock, objects } = versionedBucketMock({ takenBeforeCompletion: true });

    // Act
    const attempt = streamToS3({
      s3: client,
      bucket: RESULTS_BUCKET,
      key: 'scans/x/report.json',
      body: Readable.from([bytes(6 * MiB, 9)]),
      contentType: 'application/json',
      partSizeBytes: 5 * MiB,
      copyPartSizeBytes: 5 * MiB,
      stagingKey: 'scans/x/.staging/report-2',
    });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(DestinationTakenError);
    expect(objects.get('scans/x/report.json')).toHaveLength(1);
    expect(objects.get('scans/x/.staging/report-2')).toEqual([]);
    expect(mock.commandCalls(AbortMultipartUploadCommand).map((call) => call.args[0].input.Key)).toEqual([
      'scans/x/report.json',
    ]);
  });
});

/**
 * S3 is read-after-write consistent; s3rver 3.7 answers a write before its file is complete.
 * local/services/s3/s3rver-durable-writes.ts makes its store answer only once the bytes are in place, and
 * leave what was stored untouched when a body fails half-way. The store-level cases are the
 * deterministic ones: one large chunk is still being written when s3rver's own store answers.
 */
import { createHash } from 'node:crypto';
import { link, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import fc from 'fast-check';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { type WritingStore, writeDurably } from '../../local/services/s3/s3rver-durable-writes.ts';
import { readObject } from '../kit/s3.ts';

const MiB = 1024 * 1024;
const md5Of = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

let server: S3rver;
let store: WritingStore;
let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 's3rver-durable-'));
  server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: 'b' }],
  });
  await server.run();
  store = (server as unknown as { store: WritingStore }).store;
  writeDurably(store);
});
afterAll(async () => {
  await server.close();
  await rm(directory, { recursive: true, force: true });
});

describe("s3rver's store, made durable", () => {
  it('answers a PUT once the whole object is in its file (one 32 MiB chunk)', async () => {
    // Prepare
    const body = Buffer.alloc(32 * MiB, 7);

    // Act
    const stored = await store.putObject({
      bucket: 'b',
      key: 'big.bin',
      content: Readable.from([body]),
      metadata: {},
    });

    // Assess: the file is complete the moment the write is answered
    expect((await stat(store.getResourcePath('b', 'big.bin', 'object'))).size).toBe(body.length);
    expect(stored).toEqual({ size: body.length, md5: md5Of(body) });
  });

  it('answers an UploadPart once the whole part is in its file', async () => {
    // Prepare
    const body = Buffer.alloc(16 * MiB, 3);

    // Act
    const stored = await store.putPart('b', 'upload-1', 1, Readable.from([body]));

    // Assess
    const partPath = join(store.getResourcePath('b', undefined, 'uploads'), 'upload-1', '1');
    expect((await stat(partPath)).size).toBe(body.length);
    expect(await readFile(`${partPath}.md5`, 'utf8')).toBe(md5Of(body));
    expect(stored.size).toBe(body.length);
  });

  it("overwrites an object in its file, so the mirror's hard link to it shows the new bytes", async () => {
    // Prepare: a stored record, hard-linked as the local runner's mirror links it (local/output/export.ts)
    await store.putObject({
      bucket: 'b',
      key: 'failure.json',
      content: Buffer.from('{"v":1}'),
      metadata: {},
    });
    const mirrored = join(directory, 'mirrored-failure.json');
    await link(store.getResourcePath('b', 'failure.json', 'object'), mirrored);

    // Act
    await store.putObject({
      bucket: 'b',
      key: 'failure.json',
      content: Readable.from([Buffer.from('{"v":2,"linked":true}')]),
      metadata: {},
    });

    // Assess
    expect(await readFile(mirrored, 'utf8')).toBe('{"v":2,"linked":true}');
  });

  it('keeps the stored object, and leaves no partial file, when a body fails half-way', async () => {
    // Prepare: an object, then a PUT of the same key whose body breaks after 1 MiB
    const kept = Buffer.from('{"kept":true}');
    await store.putObject({ bucket: 'b', key: 'summary.json', content: kept, metadata: {} });
    const broken = new Readable({
      read() {
        this.push(Buffer.alloc(MiB, 1));
        this.destroy(new Error('connection reset'));
      },
    });

    // Act
    const put = store.putObject({ bucket: 'b', key: 'summary.json', content: broken, metadata: {} });

    // Assess
    await expect(put).rejects.toThrow('connection reset');
    const objectPath = store.getResourcePath('b', 'summary.json', 'object');
    expect(await readFile(objectPath)).toEqual(kept);
    const folder = join(objectPath, '..');
    expect((await readdir(folder)).filter((name) => name.includes('.partial-'))).toEqual([]);
  });
});

describe('the embedded S3 over HTTP', () => {
  let s3: Awaited<ReturnType<typeof startS3rver>>;
  beforeAll(async () => {
    s3 = await startS3rver({ buckets: ['results'] });
  });
  afterAll(() => s3.close());

  it('joins a multipart upload right after its last part into exactly the bytes sent', async () => {
    // Prepare
    const parts = [Buffer.alloc(5 * MiB, 1), Buffer.alloc(5 * MiB, 2), Buffer.from('tail')];
    const { UploadId } = await s3.client.send(
      new CreateMultipartUploadCommand({ Bucket: 'results', Key: 'report.zip' }),
    );

    // Act: each part sent, then joined at once
    const etags = [];
    for (const [index, body] of parts.entries()) {
      const part = await s3.client.send(
        new UploadPartCommand({
          Bucket: 'results',
          Key: 'report.zip',
          UploadId,
          PartNumber: index + 1,
          Body: body,
        }),
      );
      etags.push({ ETag: part.ETag, PartNumber: index + 1 });
    }
    await s3.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'results',
        Key: 'report.zip',
        UploadId,
        MultipartUpload: { Parts: etags },
      }),
    );

    // Assess
    expect(md5Of(await readObject(s3.client, 'results', 'report.zip'))).toBe(md5Of(Buffer.concat(parts)));
  });

  it('serves only whole objects, each with its own ETag, while writers race readers on one key', async () => {
    // Prepare: versions of one JSON record whose sizes (1 byte to 256 KiB of padding) are drawn
    const sizes = fc.sample(fc.integer({ min: 1, max: 256 * 1024 }), { numRuns: 48, seed: 45 });
    const versions = sizes.map((size, index) =>
      Buffer.from(JSON.stringify({ version: index, pad: 'x'.repeat(size) })),
    );
    const byDigest = new Map(versions.map((body) => [md5Of(body), body]));
    await s3.client.send(new PutObjectCommand({ Bucket: 'results', Key: 'race.json', Body: versions[0] }));
    let writing = true;
    const reads: { body: Buffer; etag: string | undefined; length: number | undefined }[] = [];
    const failedReads: string[] = [];

    // Act: six writers put every version (some by copy) while eight readers read as fast as they can
    const writers = Array.from({ length: 6 }, async (_, writer) => {
      for (const [index, body] of versions.entries()) {
        if ((index + writer) % 6 !== 0) continue;
        if (index % 4 === 3) {
          const source = `race-source-${index}.json`;
          await s3.client.send(new PutObjectCommand({ Bucket: 'results', Key: source, Body: body }));
          await s3.client.send(
            new CopyObjectCommand({ Bucket: 'results', Key: 'race.json', CopySource: `results/${source}` }),
          );
        } else {
          await s3.client.send(new PutObjectCommand({ Bucket: 'results', Key: 'race.json', Body: body }));
        }
      }
    });
    const readers = Array.from({ length: 8 }, async () => {
      while (writing) {
        try {
          const answer = await s3.client.send(new GetObjectCommand({ Bucket: 'results', Key: 'race.json' }));
          const body = Buffer.from((await answer.Body?.transformToByteArray()) ?? []);
          reads.push({ body, etag: answer.ETag, length: answer.ContentLength });
        } catch (error) {
          // A body shorter than its Content-Length ends the read: a partial object too.
          failedReads.push(error instanceof Error ? error.message : String(error));
        }
      }
    });
    await Promise.all(writers);
    writing = false;
    await Promise.all(readers);

    // Assess: every read is one version exactly, with that version's ETag and length
    expect(reads.length).toBeGreaterThan(versions.length);
    const broken = reads.filter(
      (read) =>
        byDigest.get(md5Of(read.body))?.equals(read.body) !== true ||
        read.etag !== `"${md5Of(read.body)}"` ||
        read.length !== read.body.length,
    );
    expect(broken.map((read) => ({ bytes: read.body.length, length: read.length, etag: read.etag }))).toEqual(
      [],
    );
  }, 60_000);
});

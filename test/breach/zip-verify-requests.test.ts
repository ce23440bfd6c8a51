/**
 * ZIP verification in a number of S3 requests that does not grow with the entries: at Lambda's
 * 10-30 ms per request, a per-entry ranged read made a 10,000-entry report's check outlive the
 * function's timeout. The check still reads every entry (a flipped byte in the last one is found).
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZipFile } from 'yazl';
import { verifyStoredZip } from '#lambdas/breach/zip/zip-verify';
import { recordS3Commands, type S3rverFixture, startS3rver } from '#local/services/s3/embedded-s3';

const BUCKET = 'zip-verify';
let s3: S3rverFixture;
beforeEach(async () => {
  s3 = await startS3rver({ buckets: [BUCKET] });
});
afterEach(async () => {
  await s3.close();
});

/** `count` small entries, alternately deflated and stored, some streamed (data descriptors). */
async function zipWith(count: number): Promise<Buffer> {
  const zip = new ZipFile();
  for (let index = 0; index < count; index += 1) {
    const content = Buffer.from(`entry ${index}: ${'breach record '.repeat(index % 7)}\n`);
    zip.addBuffer(content, `records/${String(index).padStart(5, '0')}.txt`, {
      compress: index % 2 === 0,
      mtime: new Date('2026-11-20T10:00:00Z'),
    });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function store(key: string, body: Buffer): Promise<void> {
  await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

describe('verifyStoredZip request count', () => {
  it('reads 10 and 2,000 entries in the same few requests', async () => {
    // Prepare
    const small = await zipWith(10);
    const large = await zipWith(2_000);
    await store('small.zip', small);
    await store('large.zip', large);
    const client = s3.createClient();
    const sent = recordS3Commands(client);

    // Act
    const smallResult = await verifyStoredZip(client, {
      bucket: BUCKET,
      key: 'small.zip',
      size: small.length,
    });
    const smallRequests = sent.length;
    const largeResult = await verifyStoredZip(client, {
      bucket: BUCKET,
      key: 'large.zip',
      size: large.length,
    });
    const largeRequests = sent.length - smallRequests;

    // Assess
    expect(smallResult.entries).toHaveLength(10);
    expect(largeResult.entries).toHaveLength(2_000);
    expect(largeResult.entries[1_999]).toMatchObject({ name: 'records/01999.txt' });
    expect(largeRequests).toBeLessThanOrEqual(5);
    // One more only when the directory is longer than the end record's 64 KiB search window.
    expect(largeRequests).toBeLessThanOrEqual(smallRequests + 1);
  }, 120_000);

  it('still finds a flipped byte in the last of 2,000 entries', async () => {
    // Prepare: the last entry is stored (odd index), so its bytes sit before the central directory
    const zip = await zipWith(2_000);
    const marker = Buffer.from('entry 1999:');
    const at = zip.lastIndexOf(marker);
    zip[at] = zip[at] === 0x65 ? 0x45 : 0x65;
    await store('flipped.zip', zip);

    // Act
    const attempt = verifyStoredZip(s3.client, { bucket: BUCKET, key: 'flipped.zip', size: zip.length });

    // Assess
    await expect(attempt).rejects.toMatchObject({
      check: 'crc',
      message: expect.stringMatching(/entry 1999 \(records\/01999\.txt\) has CRC-32/),
    });
  }, 120_000);
});

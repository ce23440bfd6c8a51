import { ListObjectsV2Command, PutObjectCommand, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forEachBounded } from '#lambdas/platform/runs/bounded';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';

const BUCKET = 'listing-tokens';
// Past one page (1,000 keys), with keys outside the prefix on both sides of it.
const KEYS = Array.from({ length: 1_234 }, (_, i) => `reports/r-${String(i).padStart(5, '0')}/manifest.json`);

describe('ListObjectsV2 beyond one page on the embedded S3', () => {
  let s3rver: S3rverFixture;
  beforeAll(async () => {
    s3rver = await startS3rver({ buckets: [BUCKET] });
    await forEachBounded([...KEYS, 'aaa/before.txt', 'zzz/after.txt'], 16, async (key) => {
      await s3rver.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: '{}' }));
    });
  }, 120_000);
  afterAll(async () => {
    await s3rver?.close();
  });

  it('pages through every key once, in order, with continuation tokens', async () => {
    const pages: { count: number; truncated: boolean }[] = [];
    const keys: string[] = [];
    for await (const page of paginateListObjectsV2(
      { client: s3rver.client },
      { Bucket: BUCKET, Prefix: 'reports/' },
    )) {
      pages.push({ count: page.KeyCount ?? 0, truncated: page.IsTruncated === true });
      keys.push(...(page.Contents ?? []).map((object) => object.Key ?? ''));
    }
    expect(pages).toEqual([
      { count: 1000, truncated: true },
      { count: 234, truncated: false },
    ]);
    expect(keys).toEqual(KEYS);
  });

  it('echoes the token it was given and refuses one it did not make', async () => {
    const first = await s3rver.client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'reports/', MaxKeys: 10 }),
    );
    const token = first.NextContinuationToken ?? '';
    expect(token).not.toBe('');
    const second = await s3rver.client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'reports/', MaxKeys: 10, ContinuationToken: token }),
    );
    expect(second.ContinuationToken).toBe(token);
    expect(second.Contents?.[0]?.Key).toBe(KEYS[10]);
    await expect(
      s3rver.client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'reports/', ContinuationToken: 'bm90LW91cnM' }),
      ),
    ).rejects.toMatchObject({ name: 'InvalidArgument' });
  });
});

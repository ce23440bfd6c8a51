import { ListObjectsV2Command, PutObjectCommand, paginateListObjectsV2 } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forEachBounded } from '#lambdas/platform/runs/bounded';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';

const BUCKET = 'listing-tokens';
// Several pages of PAGE_SIZE keys, with keys outside the prefix on both sides of them. s3rver makes
// a continuation token for any truncated page, whatever its size (its own default is S3's 1,000),
// so pages of 10 take the same path as a listing past 1,000 keys without putting 1,000 objects.
const PAGE_SIZE = 10;
const KEYS = Array.from({ length: 34 }, (_, i) => `reports/r-${String(i).padStart(5, '0')}/manifest.json`);

describe('ListObjectsV2 past one page on the embedded S3', () => {
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
      { client: s3rver.client, pageSize: PAGE_SIZE },
      { Bucket: BUCKET, Prefix: 'reports/' },
    )) {
      pages.push({ count: page.KeyCount ?? 0, truncated: page.IsTruncated === true });
      keys.push(...(page.Contents ?? []).map((object) => object.Key ?? ''));
    }
    expect(pages).toEqual([
      { count: 10, truncated: true },
      { count: 10, truncated: true },
      { count: 10, truncated: true },
      { count: 4, truncated: false },
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

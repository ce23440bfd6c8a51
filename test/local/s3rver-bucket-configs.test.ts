/**
 * The embedded S3 remembers that a bucket has no CORS or website configuration instead of reading
 * the missing file on every request (local/services/s3/s3rver-bucket-configs.ts): a configuration
 * written afterwards is still the one every later request sees.
 */
import {
  GetBucketCorsCommand,
  GetObjectCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';

const BUCKET = 'bucket-configs';

describe('bucket configurations on the embedded S3', () => {
  let s3rver: S3rverFixture;
  beforeAll(async () => {
    s3rver = await startS3rver({ buckets: [BUCKET] });
  });
  afterAll(async () => {
    await s3rver?.close();
  });

  it('serves objects of a bucket without a CORS configuration, then the configuration written after them', async () => {
    // Prepare: requests that find no configuration
    await s3rver.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'a.txt', Body: 'a' }));
    const read = await s3rver.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'a.txt' }));
    expect(await read.Body?.transformToString()).toBe('a');
    await expect(s3rver.client.send(new GetBucketCorsCommand({ Bucket: BUCKET }))).rejects.toMatchObject({
      name: 'NoSuchCORSConfiguration',
    });

    // Act
    const rule = { AllowedMethods: ['GET'], AllowedOrigins: ['https://example.com'] };
    await s3rver.client.send(
      new PutBucketCorsCommand({ Bucket: BUCKET, CORSConfiguration: { CORSRules: [rule] } }),
    );

    // Assess: the configuration as written, from the store's file
    const cors = await s3rver.client.send(new GetBucketCorsCommand({ Bucket: BUCKET }));
    expect(cors.CORSRules).toEqual([expect.objectContaining(rule)]);
  });
});

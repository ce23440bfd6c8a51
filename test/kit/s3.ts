/**
 * Reading back what the code under test stored in the embedded S3 (local/services/s3/embedded-s3.ts, started
 * with `startS3rver`). Every helper names its bucket: the workflows write to more than one.
 */
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

export async function readObject(s3: S3Client, bucket: string, key: string): Promise<Buffer> {
  const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from((await object.Body?.transformToByteArray()) ?? []);
}

export async function readJson<T = Record<string, unknown>>(
  s3: S3Client,
  bucket: string,
  key: string,
): Promise<T> {
  return JSON.parse((await readObject(s3, bucket, key)).toString('utf8')) as T;
}

export async function objectExists(s3: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (error) {
    // HEAD has no body, so the SDK can only name the status: NotFound. GET-style paths say NoSuchKey.
    if (error instanceof Error && (error.name === 'NotFound' || error.name === 'NoSuchKey')) return false;
    throw error;
  }
}

/** Every key under `prefix`, sorted (one page is plenty for these tests). */
export async function listKeys(s3: S3Client, bucket: string, prefix = ''): Promise<string[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
}

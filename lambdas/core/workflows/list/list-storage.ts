/** JSON objects of a list run in S3 (items, rejects, summary, the Map's result files). */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { InvalidInputError } from '#core/errors';

/** What the helpers need: an S3 client and the results bucket. */
interface StorageDeps {
  readonly s3: S3Client;
  readonly settings: { readonly resultsBucket: string };
}

export async function putJson(
  deps: StorageDeps,
  key: string,
  value: unknown,
  indent?: number,
): Promise<void> {
  await deps.s3.send(
    new PutObjectCommand({
      Bucket: deps.settings.resultsBucket,
      Key: key,
      Body: JSON.stringify(value, null, indent),
      ContentType: 'application/json',
    }),
  );
}

export async function getJson<T>(deps: StorageDeps, bucket: string, key: string): Promise<T> {
  const object = await deps.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const text = await object.Body?.transformToString('utf-8');
  if (text === undefined) throw new InvalidInputError(key, 'object is empty');
  return JSON.parse(text) as T;
}

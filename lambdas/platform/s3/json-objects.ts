/**
 * JSON documents the workflows keep in the results bucket (list items and summaries, breach
 * records and manifests), and the existence checks their idempotency rests on.
 */
import {
  GetObjectCommand,
  HeadObjectCommand,
  type HeadObjectCommandOutput,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { InvalidInputError } from '#lambdas/platform/errors';
import { jsonText } from '#lambdas/platform/input/text-encoding';

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
      Body: jsonText(value, indent),
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

/** The S3 errors that mean "no such object" (without s3:ListBucket a missing key is AccessDenied). */
export function isMissingObject(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  const status = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata
    ?.httpStatusCode;
  return name === 'NoSuchKey' || name === 'NotFound' || status === 404;
}

/** The object's metadata, or undefined when there is no such object in the results bucket. */
export async function headIfExists(
  deps: StorageDeps,
  key: string,
): Promise<HeadObjectCommandOutput | undefined> {
  try {
    return await deps.s3.send(new HeadObjectCommand({ Bucket: deps.settings.resultsBucket, Key: key }));
  } catch (error) {
    if (isMissingObject(error)) return undefined;
    throw error;
  }
}

/** A JSON document of the results bucket, or undefined when there is none. */
export async function getJsonIfExists(deps: StorageDeps, key: string): Promise<unknown> {
  try {
    return await getJson<unknown>(deps, deps.settings.resultsBucket, key);
  } catch (error) {
    if (isMissingObject(error)) return undefined;
    throw error;
  }
}

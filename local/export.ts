/**
 * Mirrors S3 objects to plain files under `<outDir>/<bucket>/<key>`, byte for byte, so users can
 * read local results with ordinary tools.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

export interface ExportReport {
  readonly written: number;
  readonly unchanged: number;
  /** Files that already existed with other content: left as they were (nothing local is overwritten). */
  readonly kept: readonly string[];
}

/** The local path for an object, refusing keys that would escape the output folder. */
export function localPathFor(outDir: string, bucket: string, key: string): string {
  const root = resolve(outDir, bucket);
  const target = resolve(root, key);
  if (!target.startsWith(root + sep)) {
    throw new Error(`Object key escapes the output folder and was not exported: ${JSON.stringify(key)}`);
  }
  return target;
}

async function sha256OfFile(path: string): Promise<string | undefined> {
  try {
    await stat(path);
  } catch {
    return undefined;
  }
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Copies every object of `bucket` under `prefix` (all when omitted) to `<outDir>/<bucket>/<key>`. */
export async function exportBucket(
  s3: S3Client,
  bucket: string,
  outDir: string,
  prefix?: string,
): Promise<ExportReport> {
  let written = 0;
  let unchanged = 0;
  const kept: string[] = [];
  let continuationToken: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: continuationToken }),
    );
    for (const entry of page.Contents ?? []) {
      if (!entry.Key) continue;
      const target = localPathFor(outDir, bucket, entry.Key);
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: entry.Key }));
      if (!(object.Body instanceof Readable)) throw new Error(`No body for s3://${bucket}/${entry.Key}`);
      await mkdir(dirname(target), { recursive: true });
      // Stream to a temporary file while hashing, then decide: a differing local file is never replaced.
      const temporary = `${target}.partial-${process.pid}`;
      const hash = createHash('sha256');
      object.Body.on('data', (chunk: Buffer) => hash.update(chunk));
      await pipeline(object.Body, createWriteStream(temporary));
      const incoming = hash.digest('hex');
      const existing = await sha256OfFile(target);
      if (existing === undefined) {
        await rename(temporary, target);
        written += 1;
      } else {
        await rm(temporary);
        if (existing === incoming) unchanged += 1;
        else kept.push(target);
      }
    }
    continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (continuationToken);
  return { written, unchanged, kept };
}

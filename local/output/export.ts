/**
 * Mirrors S3 objects to plain files under `<outDir>/<bucket>/<key>`, byte for byte, so users can
 * read local results with ordinary tools.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type ExportReport, localPathFor, type Placement, type WrittenObject } from './stored-objects.ts';

export { type ExportReport, localPathFor, type Placement, type WrittenObject } from './stored-objects.ts';

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

const WRITE_COMMANDS = new Set(['PutObjectCommand', 'CompleteMultipartUploadCommand', 'CopyObjectCommand']);

/**
 * Records every object this client successfully writes (single puts, completed multipart uploads
 * and copies, including those lib-storage sends itself) and still holds (deletes are forgotten). The
 * runner exports exactly what this run wrote, not whatever else the local buckets hold.
 */
export function trackWrittenObjects(client: S3Client): ReadonlyMap<string, WrittenObject> {
  const written = new Map<string, WrittenObject>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const { Bucket, Key } = args.input as { Bucket?: unknown; Key?: unknown };
      if (
        WRITE_COMMANDS.has(String(context.commandName)) &&
        typeof Bucket === 'string' &&
        typeof Key === 'string'
      ) {
        written.set(`${Bucket}/${Key}`, { bucket: Bucket, key: Key });
      }
      // A staged upload or a claim removed by the pipeline is no result: nothing to export.
      if (
        context.commandName === 'DeleteObjectCommand' &&
        typeof Bucket === 'string' &&
        typeof Key === 'string'
      ) {
        written.delete(`${Bucket}/${Key}`);
      }
      if (context.commandName === 'DeleteObjectsCommand' && typeof Bucket === 'string') {
        const { Delete } = args.input as { Delete?: { Objects?: { Key?: string }[] } };
        for (const object of Delete?.Objects ?? []) written.delete(`${Bucket}/${object.Key}`);
      }
      return result;
    },
    { step: 'initialize', name: 'trackWrittenObjects' },
  );
  return written;
}

/** Where the local S3 keeps an object's bytes, when it can say (see `storedFile` in embedded-s3.ts). */
export type StoredFile = (bucket: string, key: string) => string | undefined;

/**
 * A new file is a hard link to the bytes the local S3 already wrote, when that is possible (the same
 * filesystem): a 5,000-domain run then writes its outputs once, not once into the embedded S3 and
 * again into the mirror. Anything else (another filesystem, no such file) copies through GetObject.
 */
async function linkStored(storedFile: StoredFile | undefined, object: WrittenObject, target: string) {
  const source = storedFile?.(object.bucket, object.key);
  if (source === undefined || (await sha256OfFile(target)) !== undefined) return false;
  const temporary = `${target}.partial-${process.pid}`;
  try {
    await mkdir(dirname(target), { recursive: true });
    await link(source, temporary);
    await rename(temporary, target);
    return true;
  } catch {
    await rm(temporary, { force: true });
    return false;
  }
}

async function exportObject(
  s3: S3Client,
  object: WrittenObject,
  outDir: string,
  storedFile: StoredFile | undefined,
  placement: Placement,
): Promise<'written' | 'unchanged' | 'kept'> {
  const target = placement.targetOf?.(object) ?? localPathFor(outDir, object.bucket, object.key);
  if (await linkStored(storedFile, object, target)) return 'written';
  const response = await s3.send(new GetObjectCommand({ Bucket: object.bucket, Key: object.key }));
  if (!(response.Body instanceof Readable))
    throw new Error(`No body for s3://${object.bucket}/${object.key}`);
  await mkdir(dirname(target), { recursive: true });
  // Stream to a temporary file while hashing, then decide: a differing local file is never replaced.
  const temporary = `${target}.partial-${process.pid}`;
  const hash = createHash('sha256');
  response.Body.on('data', (chunk: Buffer) => hash.update(chunk));
  await pipeline(response.Body, createWriteStream(temporary));
  const incoming = hash.digest('hex');
  const existing = await sha256OfFile(target);
  if (existing === undefined) {
    await rename(temporary, target);
    return 'written';
  }
  if (existing === incoming) {
    await rm(temporary);
    return 'unchanged';
  }
  // This tool's own copy, which the run read and carried on, still as it was: the run's replaces it.
  if (placement.carried?.get(target) === existing) {
    await rename(temporary, target);
    return 'written';
  }
  await rm(temporary);
  return 'kept';
}

/** Copies the given objects to `<outDir>/<bucket>/<key>`, a few at a time. */
export async function exportObjects(
  s3: S3Client,
  objects: Iterable<WrittenObject>,
  outDir: string,
  concurrency = 8,
  storedFile?: StoredFile,
  placement: Placement = {},
): Promise<ExportReport> {
  const queue = [...objects].sort((a, b) => `${a.bucket}/${a.key}`.localeCompare(`${b.bucket}/${b.key}`));
  let written = 0;
  let unchanged = 0;
  const kept: string[] = [];
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    while (next < queue.length) {
      const object = queue[next++] as WrittenObject;
      const outcome = await exportObject(s3, object, outDir, storedFile, placement);
      if (outcome === 'written') written += 1;
      else if (outcome === 'unchanged') unchanged += 1;
      else kept.push(placement.targetOf?.(object) ?? localPathFor(outDir, object.bucket, object.key));
    }
  });
  await Promise.all(lanes);
  return { written, unchanged, kept };
}

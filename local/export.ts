/**
 * Mirrors S3 objects to plain files under `<outDir>/<bucket>/<key>`, byte for byte, so users can
 * read local results with ordinary tools.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  createReadStream,
  createWriteStream,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';

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

const WRITE_COMMANDS = new Set(['PutObjectCommand', 'CompleteMultipartUploadCommand', 'CopyObjectCommand']);

export interface WrittenObject {
  readonly bucket: string;
  readonly key: string;
}

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
  storedFile?: StoredFile,
): Promise<'written' | 'unchanged' | 'kept'> {
  const target = localPathFor(outDir, object.bucket, object.key);
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
  await rm(temporary);
  return existing === incoming ? 'unchanged' : 'kept';
}

/** Copies the given objects to `<outDir>/<bucket>/<key>`, a few at a time. */
export async function exportObjects(
  s3: S3Client,
  objects: Iterable<WrittenObject>,
  outDir: string,
  concurrency = 8,
  storedFile?: StoredFile,
): Promise<ExportReport> {
  const queue = [...objects].sort((a, b) => `${a.bucket}/${a.key}`.localeCompare(`${b.bucket}/${b.key}`));
  let written = 0;
  let unchanged = 0;
  const kept: string[] = [];
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    while (next < queue.length) {
      const object = queue[next++] as WrittenObject;
      const outcome = await exportObject(s3, object, outDir, storedFile);
      if (outcome === 'written') written += 1;
      else if (outcome === 'unchanged') unchanged += 1;
      else kept.push(localPathFor(outDir, object.bucket, object.key));
    }
  });
  await Promise.all(lanes);
  return { written, unchanged, kept };
}

/** An object whose bytes are in a file of the embedded S3's folder. */
export interface StoredObject extends WrittenObject {
  readonly file: string;
}

function sha256OfFileSync(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * `exportObjects` without the server, synchronously, from the files the embedded S3 wrote: what an
 * interrupt that must exit at once still keeps, and how a later run rescues what a killed run left.
 * The same rules: a hard link where possible (else a copy), and a differing local file is never
 * replaced.
 */
export function exportStoredObjectsSync(objects: Iterable<StoredObject>, outDir: string): ExportReport {
  let written = 0;
  let unchanged = 0;
  const kept: string[] = [];
  for (const object of objects) {
    const target = localPathFor(outDir, object.bucket, object.key);
    if (existsSync(target)) {
      if (sha256OfFileSync(target) === sha256OfFileSync(object.file)) unchanged += 1;
      else kept.push(target);
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    const temporary = `${target}.partial-${process.pid}`;
    try {
      linkSync(object.file, temporary);
    } catch {
      copyFileSync(object.file, temporary);
    }
    renameSync(temporary, target);
    written += 1;
  }
  return { written, unchanged, kept };
}

/** s3rver's name for the file that holds an object's bytes: `<last key segment>._S3rver_object`. */
const S3RVER_OBJECT_SUFFIX = '._S3rver_object';

/**
 * Every complete object in an embedded S3 folder (`<dir>/<bucket>/<key>._S3rver_object`; partial
 * writes have other names), read from the disk alone: its server may be long gone.
 */
export function storedObjectsIn(s3Directory: string): StoredObject[] {
  const objects: StoredObject[] = [];
  for (const bucket of readdirSync(s3Directory, { withFileTypes: true })) {
    if (!bucket.isDirectory()) continue;
    const root = join(s3Directory, bucket.name);
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(S3RVER_OBJECT_SUFFIX)) continue;
      const file = join(entry.parentPath, entry.name);
      const key = relative(root, file).split(sep).join('/').slice(0, -S3RVER_OBJECT_SUFFIX.length);
      // Multipart uploads in progress are not objects.
      if (key.startsWith('._S3rver_uploads/')) continue;
      objects.push({ bucket: bucket.name, key, file });
    }
  }
  return objects;
}

/** Exports what an embedded S3 folder holds, then removes the folder; returns what was exported. */
export function rescueStoredObjects(s3Directory: string, outDir: string): ExportReport {
  const report = exportStoredObjectsSync(storedObjectsIn(s3Directory), outDir);
  rmSync(s3Directory, { recursive: true, force: true });
  return report;
}

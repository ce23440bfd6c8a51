/**
 * s3rver 3.7 answers a PUT Object and an UploadPart before the file that holds the bytes is
 * written: its FilesystemStore resolves `putObject`/`putPart` when the body has gone through its MD5
 * transform ('finish' of the transform, or at once for a Buffer body), while the fs.WriteStream
 * behind it may still be writing. A GET, a listing's size or a CompleteMultipartUpload that follows
 * at once can then read a short or empty file. S3 itself is strongly read-after-write consistent
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/Welcome.html#ConsistencyModel), and the
 * pipeline relies on it: the runner reads summary.json back right after WriteListSummary wrote it,
 * and a multipart upload's parts are joined right after the last one is answered.
 *
 * This replaces the two writes with ones that answer once the file is complete, and that fail the
 * request, leaving what was stored as it was, when the body errors.
 *
 * s3rver also overwrites an object's file in place while it may be read: a GET racing a PUT of the
 * same key could read part of the new bytes, or old bytes under the new length. S3 serves only whole
 * objects. Here a new version replaces the file by rename, and the reads and writes of one object
 * take turns through a {@link KeyGate}, so a reader gets one whole version with its own ETag.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { KeyGate } from './s3rver-key-gate.ts';

/** What s3rver's store hands a PUT: its key, its body (a request stream, or a Buffer) and headers. */
interface StoredObject {
  readonly bucket: string;
  readonly key: string;
  readonly content: Readable | Buffer;
  readonly metadata: unknown;
}

/** The part of s3rver's FilesystemStore its reads and writes use. */
export interface WritingStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  getMetadata(bucket: string, key: string): Promise<unknown>;
  getObject(bucket: string, key: string, options?: unknown): Promise<{ content?: Readable | null } | null>;
  copyObject(...args: unknown[]): Promise<unknown>;
  deleteObject(bucket: string, key: string): Promise<unknown>;
  putMetadata(bucket: string, key: string, metadata: unknown, md5?: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
  putPart(
    bucket: string,
    uploadId: string,
    partNumber: number,
    content: Readable,
  ): Promise<{ size: number; md5: string }>;
}

/**
 * Makes `store` answer a write only once its bytes are in their file, as S3 answers, and serve each
 * read one whole version of the object.
 */
export function writeDurably(store: WritingStore): void {
  const gate = new KeyGate();
  const objectPath = (bucket: string, key: string) => store.getResourcePath(bucket, key, 'object');
  const { getMetadata, getObject, copyObject, deleteObject } = store;
  // s3rver's own reads and copies call getMetadata inside: through the gate they already hold, a
  // second turn would wait behind a queued writer that waits for them.
  const inside: WritingStore = Object.create(store);
  inside.getMetadata = getMetadata;
  store.putObject = async function (this: WritingStore, object) {
    const path = objectPath(object.bucket, object.key);
    const { partial, size, md5 } = await writeBody(object.content, path);
    try {
      await gate.write(path, async () => {
        await replaceWith(partial, path, gate);
        await this.putMetadata(object.bucket, object.key, object.metadata, md5);
      });
    } finally {
      await rm(partial, { force: true });
    }
    return { size, md5 };
  };
  store.putPart = async function (this: WritingStore, bucket, uploadId, partNumber, content) {
    const partPath = join(this.getResourcePath(bucket, undefined, 'uploads'), uploadId, String(partNumber));
    const { partial, size, md5 } = await writeBody(content, partPath);
    await rename(partial, partPath);
    await writeFile(`${partPath}.md5`, md5);
    return { size, md5 };
  };
  // The file is opened inside the gate: what the stream reads afterwards is that version.
  store.getObject = (bucket, key, options) => {
    const path = objectPath(bucket, key);
    return gate.read(path, async () => {
      const object = await getObject.call(inside, bucket, key, options);
      gate.track(path, object?.content);
      return object;
    });
  };
  store.getMetadata = function (this: WritingStore, bucket, key) {
    return gate.read(objectPath(bucket, key), () => getMetadata.call(this, bucket, key));
  };
  // s3rver copies into the destination's file in place: alone, once its readers are done.
  store.copyObject = (...args: unknown[]) => {
    const path = objectPath(String(args[2]), String(args[3]));
    return gate.write(path, async () => {
      await gate.drain(path);
      return copyObject.apply(inside, args);
    });
  };
  store.deleteObject = function (this: WritingStore, bucket, key) {
    return gate.write(objectPath(bucket, key), () => deleteObject.call(this, bucket, key));
  };
}

/**
 * Writes `content` beside `path` and resolves with the temporary file, its size and MD5 once it is
 * complete; the caller puts it in place. A body that fails half-way leaves the object as it was, as
 * a failed PUT does in S3 (s3rver lists only files named `*._S3rver_object`).
 */
async function writeBody(
  content: Readable | Buffer,
  path: string,
): Promise<{ partial: string; size: number; md5: string }> {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.partial-${randomUUID()}`;
  const md5 = createHash('md5');
  let size = 0;
  try {
    if (Buffer.isBuffer(content)) {
      await writeFile(partial, content);
      md5.update(content);
      size = content.length;
    } else {
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          md5.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
      });
      // pipeline settles after the file stream's 'finish', when every write has reached the file.
      await pipeline(content, counted, createWriteStream(partial));
    }
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { partial, size, md5: md5.digest('hex') };
}

/**
 * The new version's file is the temporary file, renamed: a reader that opened the old one keeps
 * reading it whole. A file that is also linked elsewhere (the local runner's mirror hard-links
 * stored files, local/output/export.ts) is overwritten in place instead, so that an overwrite, such as
 * reconciliation linking a failure record, reaches the mirror's link: only once no stream still
 * reads it.
 */
async function replaceWith(partial: string, path: string, gate: KeyGate): Promise<void> {
  const links = await stat(path).then(
    (found) => found.nlink,
    () => 0,
  );
  if (links <= 1) return rename(partial, path);
  await gate.drain(path);
  await copyFile(partial, path);
}

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
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, copyFile, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** What s3rver's store hands a PUT: its key, its body (a request stream, or a Buffer) and headers. */
interface StoredObject {
  readonly bucket: string;
  readonly key: string;
  readonly content: Readable | Buffer;
  readonly metadata: unknown;
}

/** The part of s3rver's FilesystemStore its two writes use. */
export interface WritingStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5?: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
  putPart(
    bucket: string,
    uploadId: string,
    partNumber: number,
    content: Readable,
  ): Promise<{ size: number; md5: string }>;
}

/** Makes `store` answer a write only once its bytes are in their file, as S3 answers. */
export function writeDurably(store: WritingStore): void {
  store.putObject = async function (this: WritingStore, object) {
    const { size, md5 } = await writeBody(
      object.content,
      this.getResourcePath(object.bucket, object.key, 'object'),
    );
    await this.putMetadata(object.bucket, object.key, object.metadata, md5);
    return { size, md5 };
  };
  store.putPart = async function (this: WritingStore, bucket, uploadId, partNumber, content) {
    const partPath = join(this.getResourcePath(bucket, undefined, 'uploads'), uploadId, String(partNumber));
    const { size, md5 } = await writeBody(content, partPath);
    await writeFile(`${partPath}.md5`, md5);
    return { size, md5 };
  };
}

/**
 * Writes `content` to `path` and resolves with its size and MD5 once the file is complete. The
 * bytes go to a temporary file that replaces `path` only then: a body that fails half-way leaves
 * the object as it was, as a failed PUT does in S3 (s3rver lists only files named `*._S3rver_object`).
 */
async function writeBody(content: Readable | Buffer, path: string): Promise<{ size: number; md5: string }> {
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
    await replaceWith(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { size, md5: md5.digest('hex') };
}

/**
 * A new object's file is the temporary file, renamed. An existing one is overwritten in place
 * (copyFile truncates and keeps the file): the local runner's mirror hard-links stored files
 * (local/export.ts), and an overwrite, such as reconciliation linking a failure record, must reach
 * the mirror's link as it did before.
 */
async function replaceWith(partial: string, path: string): Promise<void> {
  const exists = await access(path).then(
    () => true,
    () => false,
  );
  if (!exists) return rename(partial, path);
  await copyFile(partial, path);
  await rm(partial, { force: true });
}

/**
 * What s3rver 3.7 lacks and the result writes rely on, added as one narrow middleware in front of
 * its router, so the local runner, the tests and the bench take the same path as AWS:
 *
 * - UploadPartCopy (a PUT with `partNumber`, `uploadId` and `x-amz-copy-source`): s3rver answers
 *   NotImplemented. Here the source range is streamed into the upload's part file, as an UploadPart
 *   of those bytes would have been.
 * - `x-amz-copy-source-if-match` on UploadPartCopy and CopyObject: s3rver ignores it. Here a source
 *   whose ETag differs fails with 412 PreconditionFailed, as on AWS.
 * - `If-None-Match: *` and `If-Match: <etag>` on PutObject, CopyObject and CompleteMultipartUpload
 *   (S3 conditional writes): s3rver ignores them. Here they are checked against the key's object
 *   before s3rver writes: 412 PreconditionFailed when the condition is false, 404 NoSuchKey for
 *   If-Match on a missing key (https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html).
 *   As on AWS, the check and the write are one step: conditional writes to one key are taken one at
 *   a time, each holding the key from its check until its write is complete (s3rver answers a
 *   write once its file is whole: s3rver-durable-writes.ts), so of two racing `If-None-Match: *`
 *   writers exactly one succeeds and the other gets 412, as concurrent archives rely on.
 *
 * Requests this middleware answers skip s3rver's signature check (it runs in the router); the
 * server listens on loopback only. Versions are not emulated: a copy source naming a version id is
 * refused, since s3rver has no versions to pick from.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

interface S3ErrorConstructor {
  new (code: string, message: string, detail?: Record<string, string>): Error;
}
const S3Error = createRequire(import.meta.url)('s3rver/lib/models/error.js') as S3ErrorConstructor;

/** The part of s3rver's FilesystemStore this uses. */
interface CopyStore {
  existsObject(bucket: string, key: string): Promise<boolean>;
  getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putPart(
    bucket: string,
    uploadId: string,
    partNumber: number,
    content: NodeJS.ReadableStream,
  ): Promise<{ md5: string }>;
}

/** The part of a Koa context this uses. */
interface Context {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string | string[] | undefined>;
  readonly headers: Record<string, string | string[] | undefined>;
  body: unknown;
}
type Middleware = (ctx: Context, next: () => Promise<void>) => Promise<void>;

/** Installs the middleware just before s3rver's router (the last middleware its constructor adds). */
export function addCopyAndConditions(server: unknown, store: CopyStore): void {
  const app = server as { middleware: Middleware[] };
  if (!Array.isArray(app.middleware) || app.middleware.length === 0) {
    throw new Error(
      's3rver has changed: no middleware list to extend (local/services/s3/s3rver-copy-and-conditions.ts)',
    );
  }
  app.middleware.splice(app.middleware.length - 1, 0, copyAndConditions(store));
}

function copyAndConditions(store: CopyStore): Middleware {
  const keyLocks = new KeyLocks();
  return async (ctx, next) => {
    if (ctx.method !== 'PUT' && ctx.method !== 'POST') return next();
    const target = bucketAndKey(ctx.path);
    if (!target) return next();
    const copySource = header(ctx, 'x-amz-copy-source');
    const uploadId = typeof ctx.query.uploadId === 'string' ? ctx.query.uploadId : undefined;
    if (ctx.method === 'PUT' && copySource !== undefined && uploadId !== undefined) {
      await uploadPartCopy(store, ctx, target.bucket, uploadId, copySource);
      return;
    }
    if (ctx.method === 'PUT' && copySource !== undefined) {
      await checkSourceIfMatch(store, ctx, parseCopySource(copySource));
    }
    const isWrite =
      ctx.method === 'PUT' ? uploadId === undefined && !hasSubresource(ctx) : uploadId !== undefined;
    if (isWrite && (header(ctx, 'if-none-match') !== undefined || header(ctx, 'if-match') !== undefined)) {
      return keyLocks.run(`${target.bucket}/${target.key}`, async () => {
        await checkWriteConditions(store, ctx, target.bucket, target.key);
        await next();
      });
    }
    return next();
  };
}

/** One holder per key at a time, in arrival order; a key nobody waits for holds no entry. */
class KeyLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    await before;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

async function uploadPartCopy(
  store: CopyStore,
  ctx: Context,
  bucket: string,
  uploadId: string,
  copySource: string,
): Promise<void> {
  const partNumber = Number(ctx.query.partNumber);
  if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000) {
    throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
  }
  const uploadDir = join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
  if (!(await stat(uploadDir).catch(() => undefined))?.isDirectory()) {
    throw new S3Error('NoSuchUpload', 'The specified upload does not exist.', { UploadId: uploadId });
  }
  const source = parseCopySource(copySource);
  const metadata = await checkSourceIfMatch(store, ctx, source);
  const size = Number(metadata['content-length']);
  const range = header(ctx, 'x-amz-copy-source-range');
  let first = 0;
  let last = size - 1;
  if (range !== undefined) {
    const match = /^bytes=(\d+)-(\d+)$/.exec(range);
    if (!match)
      throw new S3Error(
        'InvalidArgument',
        'The x-amz-copy-source-range value must be of the form bytes=first-last',
      );
    first = Number(match[1]);
    last = Number(match[2]);
    if (first > last || last >= size) {
      throw new S3Error('InvalidRange', 'The requested range is not satisfiable', { RangeRequested: range });
    }
  }
  const bytes = createReadStream(store.getResourcePath(source.bucket, source.key, 'object'), {
    start: first,
    end: last,
  });
  const { md5 } = await store.putPart(bucket, uploadId, partNumber, bytes);
  ctx.body = { CopyPartResult: { ETag: JSON.stringify(md5), LastModified: new Date().toISOString() } };
}

/** The source's metadata, once it is known to exist and to match `x-amz-copy-source-if-match`. */
async function checkSourceIfMatch(
  store: CopyStore,
  ctx: Context,
  source: { bucket: string; key: string },
): Promise<Record<string, unknown>> {
  if (!(await store.existsObject(source.bucket, source.key))) {
    throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: source.key });
  }
  const metadata = await store.getMetadata(source.bucket, source.key);
  const ifMatch = header(ctx, 'x-amz-copy-source-if-match');
  if (ifMatch !== undefined && unquote(ifMatch) !== unquote(String(metadata.etag))) {
    throw new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', {
      Condition: 'x-amz-copy-source-If-Match',
    });
  }
  return metadata;
}

async function checkWriteConditions(
  store: CopyStore,
  ctx: Context,
  bucket: string,
  key: string,
): Promise<void> {
  const ifNoneMatch = header(ctx, 'if-none-match');
  const ifMatch = header(ctx, 'if-match');
  if (ifNoneMatch === undefined && ifMatch === undefined) return;
  const exists = await store.existsObject(bucket, key);
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch !== '*') throw new S3Error('NotImplemented', 'If-None-Match takes only *');
    if (exists) {
      throw new S3Error(
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
        {
          Condition: 'If-None-Match',
        },
      );
    }
  }
  if (ifMatch !== undefined) {
    if (!exists) throw new S3Error('NoSuchKey', 'The specified key does not exist.', { Key: key });
    const etag = String((await store.getMetadata(bucket, key)).etag);
    if (unquote(ifMatch) !== unquote(etag)) {
      throw new S3Error(
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
        {
          Condition: 'If-Match',
        },
      );
    }
  }
}

function parseCopySource(value: string): { bucket: string; key: string } {
  const [path = '', query = ''] = value.split('?', 2);
  if (/(^|&)versionId=/.test(query)) {
    throw new S3Error('NotImplemented', 'The local S3 keeps no versions: a copy source cannot name one');
  }
  const [bucket = '', ...key] = path.replace(/^\//, '').split('/');
  return { bucket: decodeURIComponent(bucket), key: key.map(decodeURIComponent).join('/') };
}

function bucketAndKey(path: string): { bucket: string; key: string } | undefined {
  const [, bucket, ...key] = path.split('/');
  if (!bucket || key.length === 0 || key.join('/') === '') return undefined;
  return { bucket: decodeURIComponent(bucket), key: decodeURIComponent(key.join('/')) };
}

/** PUT ?tagging, ?acl and the like write no object. */
function hasSubresource(ctx: Context): boolean {
  return Object.keys(ctx.query).some((name) => name !== 'x-id');
}

function header(ctx: Context, name: string): string | undefined {
  const value = ctx.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function unquote(etag: string): string {
  return etag.replace(/"/g, '');
}

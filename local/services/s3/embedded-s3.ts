/**
 * An embedded S3 (s3rver) on an ephemeral loopback port, with a matching S3Client.
 *
 * Shared by every test that touches S3 and by the local runner: it is the "real part" that stands
 * in for S3 here (no AWS account exists on the build machines). What s3rver 3.7 does NOT do, so
 * tests must not rely on it: versioning (VersionId is always undefined), AbortMultipartUpload
 * (answers MethodNotAllowed, so parts of an aborted upload stay in its upload directory, invisible to
 * ListObjects) and checksums. UploadPartCopy, copy-source conditions and conditional writes
 * (If-None-Match / If-Match) are added by local/services/s3/s3rver-copy-and-conditions.ts; writes are answered
 * only once their file is complete, and a read racing a write gets one whole version
 * (local/services/s3/s3rver-durable-writes.ts), as S3 is read-after-write consistent and serves whole objects.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { defaultLatency, injectLatency, type Latency } from '../latency.ts';
import { type ConfigStore, rememberMissingBucketConfigs } from './s3rver-bucket-configs.ts';
import { addCopyAndConditions } from './s3rver-copy-and-conditions.ts';
import { type WritingStore, writeDurably } from './s3rver-durable-writes.ts';
import { addListingTokens } from './s3rver-listing-tokens.ts';

export interface S3rverFixture {
  /** e.g. http://127.0.0.1:54321 */
  readonly endpoint: string;
  /** Path-style client with the credentials s3rver accepts. */
  readonly client: S3Client;
  /** Where s3rver keeps the buckets on disk; removed by close(). */
  readonly directory: string;
  /** Builds another client for the same server (e.g. with a command-recording middleware). */
  createClient(): S3Client;
  /** Requests sent by this fixture's clients (each SDK attempt counts). */
  readonly requests: { count: number };
  /**
   * The file in which s3rver keeps an object's bytes, as they were stored (it writes them raw), so
   * the local runner can hard-link rather than copy them. Undefined where keys are encoded (Windows).
   */
  storedFile(bucket: string, key: string): string | undefined;
  close(): Promise<void>;
}

export interface StartS3rverOptions {
  /** Buckets that exist when the server starts. */
  readonly buckets: readonly string[];
  /** Keep the data directory after close() (the local runner copies objects out of it). @default false */
  readonly keepDirectory?: boolean;
  /** Use this directory instead of a fresh temporary one. */
  readonly directory?: string;
  /** Sockets the client may open to the server. @default the SDK's (50) */
  readonly maxSockets?: number;
  /** Added to every request its clients send, as S3 seen from Lambda adds 10-30 ms. @default none */
  readonly latency?: Latency;
}

/** s3rver's built-in account: it verifies SigV4 signatures, so any other key pair is refused. */
const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/**
 * Creates an S3Client for an s3rver endpoint (path-style; no AWS account needed). With `latency`,
 * every request (each retry too) waits that long before it is sent, and is counted in `requests`.
 */
export function createS3rverClient(
  endpoint: string,
  maxSockets?: number,
  options: { readonly latency?: Latency; readonly requests?: { count: number } } = {},
): S3Client {
  const client = new S3Client({
    ...(maxSockets === undefined
      ? {}
      : { requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets }) } }),
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    // s3rver predates S3's default integrity checksums (aws-chunked trailers); send them only when required.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const { latency, requests } = options;
  if (latency !== undefined || requests !== undefined) {
    client.middlewareStack.add(
      (next) => async (args) => {
        if (requests) requests.count += 1;
        await injectLatency(latency);
        return next(args);
      },
      // finalizeRequest runs once per attempt, after signing: where a network round trip would start.
      { step: 'finalizeRequest', name: 'injectedLatency', priority: 'low' },
    );
  }
  return client;
}

interface ListedObject {
  key: string;
}
interface ListingResult {
  readonly objects: ListedObject[];
  readonly commonPrefixes: string[];
  readonly isTruncated: boolean;
}
interface ListOptions {
  readonly prefix?: string;
  readonly startAfter?: string;
  readonly delimiter?: string;
  readonly maxKeys?: number;
}
/** The part of s3rver's FilesystemStore its listing uses. */
interface ListingStore {
  listObjects(bucket: string, options: ListOptions): Promise<ListingResult>;
  getBucketPath(bucket: string): string;
  getMetadata(bucket: string, key: string): Promise<unknown>;
  getResourcePath(bucket: string, key: string, resource: string): string;
}

/**
 * s3rver 3.7 lists a prefix by walking the bucket from its root, with a synchronous stat of every
 * entry on the way: each listing costs as much as the bucket holds (every `scans/<domain>/` folder),
 * so the manifest step's ListObjectsV2 made a 5,000-domain local run quadratic (minutes of blocked
 * event loop). This runs s3rver's own listing from the prefix's deepest folder instead: the same
 * keys, since every key with that prefix lives under that folder. Windows paths encode some
 * characters, so there the original walk is kept.
 */
function scopeListingsToPrefixFolder(store: ListingStore): void {
  const original = store.listObjects;
  store.listObjects = async function (this: ListingStore, bucket, options) {
    const prefix = options.prefix ?? '';
    const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    if (folder === '' || process.platform === 'win32') return original.call(this, bucket, options);
    const startAfter = options.startAfter ?? '';
    const empty: ListingResult = { objects: [], commonPrefixes: [], isTruncated: false };
    // A startAfter beyond the folder (and not inside it) is past every key in it.
    if (startAfter > folder && !startAfter.startsWith(folder)) return empty;
    const root = posix.join(this.getBucketPath(bucket), folder.slice(0, -1));
    if (!(await stat(root).catch(() => undefined))?.isDirectory()) return empty;
    const scoped: ListingStore = Object.create(this, {
      getBucketPath: { value: () => root },
      getMetadata: { value: (b: string, key: string) => this.getMetadata(b, `${folder}${key}`) },
    });
    const result = await original.call(scoped, bucket, {
      ...options,
      prefix: prefix.slice(folder.length),
      startAfter: startAfter.startsWith(folder) ? startAfter.slice(folder.length) : '',
    });
    for (const object of result.objects) object.key = `${folder}${object.key}`;
    return { ...result, commonPrefixes: result.commonPrefixes.map((common) => `${folder}${common}`) };
  };
}

/** Told of each embedded S3's data directory as it closes (test/kit/leak-watch.ts listens). */
const closeListeners = new Set<(directory: string) => Promise<void>>();

/**
 * Calls `listener` with the data directory of every embedded S3 of this process as it closes,
 * before the directory is removed (every object is a file `<bucket>/<key>._S3rver_object`), so a
 * test can search every object a run stored. Returns the unsubscribe.
 */
export function onEmbeddedS3Close(listener: (directory: string) => Promise<void>): () => void {
  closeListeners.add(listener);
  return () => closeListeners.delete(listener);
}

export async function startS3rver(options: StartS3rverOptions): Promise<S3rverFixture> {
  const directory = options.directory ?? (await mkdtemp(join(tmpdir(), 's3rver-')));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: options.buckets.map((name) => ({ name })),
  });
  const store = server.store as ListingStore;
  writeDurably(server.store as WritingStore);
  scopeListingsToPrefixFolder(store);
  rememberMissingBucketConfigs(server.store as ConfigStore);
  addCopyAndConditions(server, server.store as Parameters<typeof addCopyAndConditions>[1]);
  addListingTokens(server);
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  const clients: S3Client[] = [];
  const requests = { count: 0 };
  const latency = options.latency ?? defaultLatency('s3');
  const createClient = (): S3Client => {
    const client = createS3rverClient(endpoint, options.maxSockets, {
      requests,
      ...(latency ? { latency } : {}),
    });
    clients.push(client);
    return client;
  };
  const client = createClient();
  let closed = false;
  return {
    endpoint,
    client,
    directory,
    createClient,
    requests,
    storedFile: (bucket, key) =>
      process.platform === 'win32' ? undefined : store.getResourcePath(bucket, key, 'object'),
    async close() {
      if (closed) return;
      closed = true;
      for (const c of clients) c.destroy();
      await server.close();
      for (const listener of closeListeners) await listener(directory);
      if (!options.keepDirectory && options.directory === undefined) {
        await rm(directory, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Records every command the client sends, including the ones lib-storage sends on its own, as
 * `CommandName` or, with `withKeys`, `CommandName key` (e.g. `PutObjectCommand scans/x/manifest.json`).
 * Returns the live list.
 */
export function recordS3Commands(client: S3Client, options: { withKeys?: boolean } = {}): string[] {
  const entries: string[] = [];
  client.middlewareStack.add(
    (next, context) => (args) => {
      const key = (args.input as { Key?: unknown }).Key;
      entries.push(
        options.withKeys && typeof key === 'string'
          ? `${context.commandName} ${key}`
          : String(context.commandName),
      );
      return next(args);
    },
    { step: 'initialize', name: `recordS3Commands-${entries.length}-${Math.random()}` },
  );
  return entries;
}

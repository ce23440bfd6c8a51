/**
 * An embedded S3 (s3rver) on an ephemeral loopback port, with a matching S3Client.
 *
 * Shared by every test that touches S3 and by the local runner: it is the "real part" that stands
 * in for S3 here (no AWS account exists on the build machines). What s3rver 3.7 does NOT do, so
 * tests must not rely on it: versioning (VersionId is always undefined), AbortMultipartUpload
 * (answers MethodNotAllowed, so parts of an aborted upload stay in its upload directory, invisible to
 * ListObjects), conditional copies (x-amz-copy-source-if-match is ignored) and checksums.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

export interface S3rverFixture {
  /** e.g. http://127.0.0.1:54321 */
  readonly endpoint: string;
  /** Path-style client with the credentials s3rver accepts. */
  readonly client: S3Client;
  /** Where s3rver keeps the buckets on disk; removed by close(). */
  readonly directory: string;
  /** Builds another client for the same server (e.g. with a command-recording middleware). */
  createClient(): S3Client;
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
}

/** s3rver's built-in account: it verifies SigV4 signatures, so any other key pair is refused. */
const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** Creates an S3Client for an s3rver endpoint (path-style; no AWS account needed). */
export function createS3rverClient(endpoint: string, maxSockets?: number): S3Client {
  return new S3Client({
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
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  const clients: S3Client[] = [];
  const createClient = (): S3Client => {
    const client = createS3rverClient(endpoint, options.maxSockets);
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
    async close() {
      if (closed) return;
      closed = true;
      for (const c of clients) c.destroy();
      await server.close();
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

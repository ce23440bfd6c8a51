/**
 * Shared fixtures of the vendor-client tests: a real simulator on loopback, credential providers
 * that behave like the Secrets Manager reader (cached, re-read on forceRefresh), a recording
 * sleep, a capturing logger, and tools to prove that no key leaks.
 */
import { createHash } from 'node:crypto';
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { inspect } from 'node:util';
import type {
  CredentialProvider,
  CredentialRequest,
  VendorHttpSettings,
  VendorLogger,
} from '#lambdas/platform/vendor-api/types';
import { startVendorSimulator } from '#local/simulator/index';
import type { SimulatorOptions, VendorSimulator } from '#local/simulator/types';

export async function startSimulator(options: SimulatorOptions = {}): Promise<VendorSimulator> {
  return startVendorSimulator({ pollsToFinish: 0, ...options });
}

/**
 * Like the real secret reader: returns a cached key, and re-reads "the secret" (here: the
 * simulator's current key) only when forced. `calls` records every call's options.
 */
export function secretStoreCredentials(sim: VendorSimulator): CredentialProvider & {
  calls: CredentialRequest[];
} {
  let cached = sim.apiKey;
  const calls: CredentialRequest[] = [];
  const provider = async (options?: CredentialRequest) => {
    calls.push({ forceRefresh: options?.forceRefresh ?? false, pending: options?.pending ?? false });
    // No rotation is in progress in this store: there is no pending key.
    if (options?.pending) return undefined;
    if (options?.forceRefresh) cached = sim.apiKey;
    return cached;
  };
  return Object.assign(provider, { calls });
}

/**
 * Secrets Manager between the vendor's rotate and finishSecret: AWSCURRENT (cached or re-read)
 * still holds `current`, and AWSPENDING holds whatever `pending()` answers.
 */
export function midRotationCredentials(
  current: string,
  pending: () => string | undefined,
): CredentialProvider & { calls: CredentialRequest[] } {
  const calls: CredentialRequest[] = [];
  const provider = async (options?: CredentialRequest) => {
    calls.push({ forceRefresh: options?.forceRefresh ?? false, pending: options?.pending ?? false });
    return options?.pending ? pending() : current;
  };
  return Object.assign(provider, { calls });
}

/** A provider that always answers `key`, refresh or not, and has no pending key. */
export function fixedCredentials(key: string): CredentialProvider & { calls: number } {
  const state = { calls: 0 };
  const provider = async (options?: CredentialRequest) => {
    state.calls += 1;
    return options?.pending ? undefined : key;
  };
  return Object.defineProperty(provider, 'calls', { get: () => state.calls }) as CredentialProvider & {
    calls: number;
  };
}

/** Records each requested delay and resolves at once, so backoff tests take no wall time. */
export function recordingSleep(): ((ms: number) => Promise<void>) & { delays: number[] } {
  const delays: number[] = [];
  const sleep = async (ms: number) => {
    delays.push(ms);
  };
  return Object.assign(sleep, { delays });
}

export interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly extra: Record<string, unknown> | undefined;
}

export function capturingLogger(): VendorLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = (level: string) => (message: string, extra?: Record<string, unknown>) => {
    lines.push({ level, message, extra });
  };
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** Fast, deterministic settings: no real sleeping, jitter fixed at its maximum, short timeouts. */
export function testSettings(
  sim: VendorSimulator,
  overrides: Partial<VendorHttpSettings> = {},
): VendorHttpSettings & {
  sleep: ReturnType<typeof recordingSleep>;
  logger: ReturnType<typeof capturingLogger>;
} {
  return {
    baseUrl: sim.url,
    credentials: secretStoreCredentials(sim),
    requestTimeoutMs: 2_000,
    idleTimeoutMs: 2_000,
    random: () => 1,
    ...overrides,
    sleep: (overrides.sleep as ReturnType<typeof recordingSleep> | undefined) ?? recordingSleep(),
    logger: (overrides.logger as ReturnType<typeof capturingLogger> | undefined) ?? capturingLogger(),
  };
}

/** Reads a stream chunk by chunk (never whole) into a size and a sha256. */
export async function digestStream(stream: Readable): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Resolves with what the promise rejected with; fails the test when it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Every way an error could end up in a log, a state payload or a console. */
export function renderings(error: unknown): string[] {
  const e = error as Error;
  return [
    String(e),
    String(e?.message),
    String(e?.stack),
    safeJson(e),
    inspect(e, { depth: 10, showHidden: true }),
    inspect((e as { cause?: unknown })?.cause, { depth: 10, showHidden: true }),
  ];
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** A loopback port with nobody listening (connections get ECONNREFUSED). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A TCP relay on `port` to `target`: lets a test make a refused port start answering. */
export async function relay(port: number, targetUrl: string): Promise<{ close(): Promise<void> }> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    track(client);
    track(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

export interface RecordedRequest {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/**
 * A plain loopback HTTP server for shapes the simulator does not script (redirect loops, chains
 * across several origins, a body that stalls). It records every request it gets.
 */
export async function loopbackServer(
  handle: (req: IncomingMessage, res: ServerResponse, self: { url: string }) => void,
): Promise<{ url: string; requests: RecordedRequest[]; close(): Promise<void> }> {
  const requests: RecordedRequest[] = [];
  const self = { url: '' };
  const server = createHttpServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: { ...req.headers } });
    handle(req, res, self);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  self.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url: self.url,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** True when any header of the request carries the key, under any name. */
export function headersContain(headers: Readonly<Record<string, unknown>>, key: string): boolean {
  return Object.values(headers).some((value) => String(value).includes(key));
}

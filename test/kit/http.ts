/**
 * Loopback HTTP for tests: raw requests (no decoding, partial bodies), a port nobody listens on, a
 * TCP relay, and a scriptable server that records what it gets.
 */
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import { connect, createServer, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** One request over node:http: no redirects, no decompression, bytes as sent. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface PartialResponse {
  readonly status: number | undefined;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Bytes received before the connection ended. */
  readonly received: number;
  /** True when the body arrived whole. */
  readonly complete: boolean;
  /** Error code or message when the exchange broke. */
  readonly error: string | undefined;
}

/** Like rawRequest, but reports how far a broken exchange got instead of rejecting. */
export function probe(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<PartialResponse> {
  return new Promise((resolve) => {
    let status: number | undefined;
    let responseHeaders: PartialResponse['headers'] = {};
    let received = 0;
    let error: string | undefined;
    const req = request(url, { method, headers, agent: false }, (res) => {
      status = res.statusCode;
      responseHeaders = res.headers;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      res.on('error', (e: NodeJS.ErrnoException) => {
        error = e.code ?? e.message;
      });
      res.on('close', () =>
        resolve({ status, headers: responseHeaders, received, complete: res.complete, error }),
      );
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      resolve({ status, headers: responseHeaders, received, complete: false, error: e.code ?? e.message });
    });
    req.end();
  });
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

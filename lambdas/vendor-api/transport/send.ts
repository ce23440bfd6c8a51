/**
 * One HTTP exchange over Node's own `node:http`/`node:https`: the request goes out, the promise
 * settles with the status, the headers and the body as a stream.
 *
 * Why not the `undici` package: it was 524 KiB of every vendor-calling bundle (half of it) and
 * about a third of its import time, for features the transport does not use (bench/bundles.ts has
 * the figures). Node's global `fetch` is lazy and small, but it hides what the fault matrix needs:
 * per-request connection pools, a connect timeout told apart from a lost answer, the raw
 * `Transfer-Encoding`, and a private trust store for the loopback TLS test.
 *
 * Timeouts:
 * - the caller's `signal` bounds the exchange (a TimeoutError reason makes it a timeout); when it
 *   fires before the connection was even established, the error has code `CONNECT_TIMEOUT`, which
 *   proves the vendor never saw the request;
 * - the body's idle timeout belongs to whoever reads it (`guardBody`), because only the reader
 *   knows whether a pause is the vendor's or its own backpressure.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import type { Readable } from 'node:stream';

export type ResponseHeaders = IncomingHttpHeaders;

export interface HttpResponse {
  readonly statusCode: number;
  readonly headers: ResponseHeaders;
  readonly body: Readable;
}

/** The error code of an exchange whose connection was never established in time. */
export const CONNECT_TIMEOUT = 'CONNECT_TIMEOUT';

export interface SendOptions {
  readonly agent: http.Agent;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string | Uint8Array;
  readonly signal: AbortSignal;
  /**
   * How the host name is resolved for a new connection: the destination guard's checked lookup
   * (transport/destination.ts). @default the system's
   */
  readonly lookup?: LookupFunction;
}

/**
 * Two pools per protocol: keep-alive sockets for idempotent calls, and a fresh connection per
 * request for the others (a reset on a reused socket that went stale while a Lambda was frozen
 * would be indistinguishable from "the vendor may have processed it").
 */
export class ConnectionPools {
  private readonly agents: http.Agent[] = [];
  private readonly byKey = new Map<string, http.Agent>();

  constructor(private readonly options: { readonly ca?: readonly string[]; readonly keepAliveMs: number }) {}

  agentFor(url: URL, reuse: boolean): http.Agent {
    const key = `${url.protocol}${reuse ? 'pooled' : 'fresh'}`;
    let agent = this.byKey.get(key);
    if (!agent) {
      // `timeout` applies to idle pooled sockets: they are dropped after keepAliveMs unused.
      const common = reuse ? { keepAlive: true, timeout: this.options.keepAliveMs } : { keepAlive: false };
      agent =
        url.protocol === 'https:'
          ? new https.Agent({ ...common, ...(this.options.ca ? { ca: [...this.options.ca] } : {}) })
          : new http.Agent(common);
      this.byKey.set(key, agent);
      this.agents.push(agent);
    }
    return agent;
  }

  close(): void {
    for (const agent of this.agents) agent.destroy();
    this.agents.length = 0;
    this.byKey.clear();
  }
}

export function send(url: URL, options: SendOptions): Promise<HttpResponse> {
  const { signal } = options;
  return new Promise<HttpResponse>((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError(signal, false));
      return;
    }
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(url, {
      agent: options.agent,
      method: options.method,
      headers: options.headers,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
    let connected = false;
    let response: http.IncomingMessage | undefined;
    const onAbort = () => {
      const error = abortError(signal, connected);
      if (response) response.destroy(error);
      else req.destroy(error);
    };
    const release = () => signal.removeEventListener('abort', onAbort);
    signal.addEventListener('abort', onAbort, { once: true });

    req.once('socket', (socket: Socket) => {
      // A reused keep-alive socket is already connected; a new one is once TCP (and TLS) is up.
      if (!socket.connecting) {
        connected = true;
        return;
      }
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
        connected = true;
      });
    });
    req.once('error', (error) => {
      release();
      reject(error);
    });
    req.once('response', (res) => {
      response = res;
      res.once('close', release);
      resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
    });
    req.end(options.body);
  });
}

/** The abort reason as the error, with `CONNECT_TIMEOUT` when no connection was ever made. */
function abortError(signal: AbortSignal, connected: boolean): Error {
  const reason = signal.reason as { name?: unknown; message?: unknown } | undefined;
  const timedOut = reason?.name === 'TimeoutError';
  const message = typeof reason?.message === 'string' ? reason.message : 'the request was aborted';
  const error = new Error(timedOut && !connected ? `no connection within the timeout (${message})` : message);
  error.name = timedOut ? 'TimeoutError' : 'AbortError';
  if (timedOut && !connected) Object.assign(error, { code: CONNECT_TIMEOUT });
  return error;
}

/**
 * Response model and wire helpers shared by the API server and the storage origin. Handlers
 * return a `SimResponse` instead of writing to the socket, so that response-shaping faults can
 * cut, corrupt or drop the real answer after the request was processed (send.ts writes it).
 */
import type { IncomingMessage } from 'node:http';

export type Body = Buffer | Iterable<Buffer> | AsyncIterable<Buffer>;

export interface SimResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | number>>;
  readonly body?: Body;
}

/** A refusal a handler throws; the dispatcher renders it in the server's error format. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export const JSON_TYPE = 'application/json';

export function jsonResponse(
  status: number,
  value: unknown,
  headers: Record<string, string | number> = {},
): SimResponse {
  return {
    status,
    headers: { 'content-type': JSON_TYPE, ...headers },
    body: Buffer.from(JSON.stringify(value)),
  };
}

export function jsonError(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
) {
  return jsonResponse(status, { error: code, message }, headers);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** The media type of the request body without parameters, lower case; undefined when absent. */
export function mediaType(req: IncomingMessage): string | undefined {
  const value = req.headers['content-type'];
  if (!value) return undefined;
  return value.split(';')[0]?.trim().toLowerCase() || undefined;
}

export function decodeSegment(segment: string, what: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'bad_request', `${what} is not validly percent-encoded`);
  }
}

const MAX_BODY_BYTES = 1024 * 1024;

export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, 'payload_too_large', `request body exceeds ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const bodies = new WeakMap<IncomingMessage, Promise<Buffer>>();

/** The request's body, read once however many times it is asked for (a fault's subject, then the handler). */
export function readBodyOnce(req: IncomingMessage): Promise<Buffer> {
  let body = bodies.get(req);
  if (body === undefined) {
    body = readBody(req);
    bodies.set(req, body);
  }
  return body;
}

/** True when the client accepts gzip (a `q=0` weight opts out). */
export function acceptsGzip(req: IncomingMessage): boolean {
  const header = req.headers['accept-encoding'];
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

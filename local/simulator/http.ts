/**
 * Response model and wire helpers shared by the API server and the storage origin. Handlers
 * return a `SimResponse` instead of writing to the socket, so that response-shaping faults can
 * cut, corrupt or drop the real answer after the request was processed.
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { adversarialResponse, isAdversarial } from './adversarial.ts';
import type { ShapingFault } from './faults.ts';

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

function waitForDrain(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Resolves once everything written so far has left the process (or the socket is gone). */
function flushed(socket: Socket): Promise<void> {
  if (socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    socket.write(Buffer.alloc(0), () => resolve());
  });
}

/**
 * Writes body chunks with back-pressure, stopping after `limit` bytes. Returns false when the
 * client went away first.
 */
async function pump(res: ServerResponse, body: Body, limit: number): Promise<boolean> {
  const chunks: Iterable<Buffer> | AsyncIterable<Buffer> = Buffer.isBuffer(body) ? [body] : body;
  let sent = 0;
  for await (const chunk of chunks) {
    if (res.destroyed) return false;
    const room = limit - sent;
    const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
    sent += piece.length;
    if (piece.length > 0 && !res.write(piece)) await waitForDrain(res);
    if (sent >= limit) break;
  }
  return !res.destroyed;
}

const GARBAGE = Buffer.from('{"status": "ok", "data": [1, 2, <html>Bad Gateway</html>');

/** A prefix of a JSON object never parses; bodies that are not JSON get fixed garbage. */
function malform(response: SimResponse): Buffer {
  const body = response.body;
  if (Buffer.isBuffer(body) && body.length > 2 && body[0] === 0x7b) {
    return body.subarray(0, Math.max(1, Math.floor(body.length / 2)));
  }
  return GARBAGE;
}

/**
 * A close-delimited HTTP/1.1 answer, written to the socket directly: Node's ServerResponse always
 * frames a body (Content-Length or chunked), which is exactly what this fault must not do.
 */
async function sendUnframed(
  res: ServerResponse,
  socket: Socket,
  response: SimResponse,
  fault: Extract<ShapingFault, { type: 'unframed' }>,
): Promise<void> {
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? 'Status'}`];
  for (const [name, value] of Object.entries(response.headers ?? {})) {
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection') continue;
    lines.push(`${name}: ${value}`);
  }
  lines.push('connection: close', '', '');
  // The ServerResponse must never write to this socket now.
  res.detachSocket(socket);
  socket.write(lines.join('\r\n'));
  const limit = fault.afterBytes ?? Number.POSITIVE_INFINITY;
  let sent = 0;
  const body = response.body ?? Buffer.alloc(0);
  for await (const chunk of Buffer.isBuffer(body) ? [body] : body) {
    if (socket.destroyed) return;
    const piece = chunk.subarray(0, Math.max(0, Math.min(chunk.length, limit - sent)));
    sent += piece.length;
    if (piece.length > 0 && !socket.write(piece)) {
      await new Promise<void>((resolve) => {
        socket.once('drain', resolve);
        socket.once('close', resolve);
      });
    }
    if (sent >= limit) break;
  }
  await flushed(socket);
  if (fault.end === 'reset') socket.resetAndDestroy();
  else socket.end();
}

/** Sends a response, applying a response-shaping fault to it when one matched the request. */
export async function sendResponse(
  res: ServerResponse,
  response: SimResponse,
  shaping?: ShapingFault,
): Promise<void> {
  const socket = res.socket;
  if (res.destroyed || !socket) return;
  if (shaping?.type === 'lose-response') {
    socket.destroy();
    return;
  }
  if (shaping?.type === 'malformed-json') {
    const body = malform(response);
    res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': body.length });
    res.end(body);
    return;
  }
  if (shaping?.type === 'unframed') {
    await sendUnframed(res, socket, response, shaping);
    return;
  }
  if (isAdversarial(shaping)) {
    await sendResponse(res, adversarialResponse(shaping, response));
    return;
  }
  const body = response.body;
  const headers: Record<string, string | number> = { ...response.headers };
  if (Buffer.isBuffer(body) && headers['content-length'] === undefined)
    headers['content-length'] = body.length;
  res.writeHead(response.status, headers);
  if (shaping === undefined) {
    if (body !== undefined && !(await pump(res, body, Number.POSITIVE_INFINITY))) return;
    res.end();
    return;
  }
  res.flushHeaders();
  if (body !== undefined && !(await pump(res, body, shaping.afterBytes))) return;
  // The cut must come after the partial bytes reached the client, or it would see nothing at all.
  await flushed(socket);
  if (shaping.type === 'truncate') socket.end();
  else socket.resetAndDestroy();
}

/**
 * Writes a handler's `SimResponse` to the socket, shaped by the response-shaping fault that matched
 * the request, if any. Apart from http.ts (the response model) because the adversarial answers
 * build on that model and this module sends them.
 */
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { adversarialResponse, isAdversarial } from './adversarial.ts';
import type { ShapingFault } from './faults.ts';
import { type Body, JSON_TYPE, type SimResponse } from './http.ts';

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

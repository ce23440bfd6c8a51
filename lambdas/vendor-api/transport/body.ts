/**
 * Response bodies of the vendor transport: headers, framing, transparent decoding, whole-text
 * reads with a size cap, and the guard that types a download stream's errors.
 */

import { pipeline, Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';
import {
  VendorBodyTooLargeError,
  VendorDecodingRatioError,
  VendorError,
  VendorNetworkError,
  VendorResponseError,
  VendorTimeoutError,
} from '#lambdas/platform/errors';
import { redactText } from '#lambdas/platform/redaction/redact';
import { errorCode, sanitizeCause } from './outcome.ts';
import type { HttpResponse, ResponseHeaders } from './send.ts';

/** JSON and status answers are read whole; anything bigger than this is not a JSON answer we want. */
export const MAX_TEXT_BYTES = 8 * 1024 * 1024;

export const REQUEST_ID_HEADERS = ['x-request-id', 'x-amzn-requestid', 'request-id'] as const;

export function header(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

/** The vendor's request id, made safe to log: bounded and printable. */
export function requestIdOf(headers: ResponseHeaders): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const value = header(headers, name);
    // The vendor's text like any other: it reaches error messages and log lines.
    if (value) return redactText(value.replace(/[^\x21-\x7e]/g, '')).slice(0, 128) || undefined;
  }
  return undefined;
}

/**
 * True when the answer proves where its body ends: a Content-Length, or chunked transfer coding
 * (whose last chunk marks the end; Node's parser fails the body when it never comes). Without either, an
 * HTTP/1.x body simply runs until the connection closes, and a clean close half-way is
 * indistinguishable from the real end.
 */
export function hasFraming(headers: ResponseHeaders): boolean {
  if (parseLength(header(headers, 'content-length')) !== undefined) return true;
  const coding = header(headers, 'transfer-encoding') ?? '';
  return coding
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .includes('chunked');
}

export function parseLength(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

export function normaliseIdentity(encoding: string | undefined): string | undefined {
  return encoding === undefined || encoding.trim().toLowerCase() === 'identity' ? undefined : encoding;
}

/**
 * zlib decoders for a Content-Encoding list, outermost last (so applied in reverse); `[]` for
 * none/identity; undefined when an encoding is unknown, in which case the bytes pass through as
 * sent and `contentEncoding` tells the caller.
 */
export function decodersFor(encoding: string | undefined): Transform[] | undefined {
  const codings = (encoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  const decoders: Transform[] = [];
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') decoders.push(zlib.createGunzip());
    else if (coding === 'deflate') decoders.push(zlib.createInflate());
    else if (coding === 'br') decoders.push(zlib.createBrotliDecompress());
    else {
      for (const d of decoders) d.destroy();
      return undefined;
    }
  }
  return decoders;
}

/** The body with any content-coding removed; errors of every stage surface on the returned stream. */
export function decodedStream(body: Readable, decoders: Transform[]): Readable {
  if (decoders.length === 0) return body;
  // pipeline destroys every stage with the first error, so the last stage reports it.
  return pipeline([body, ...decoders], () => {}) as unknown as Readable;
}

export function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/** A whole-answer body with its content-coding removed; an unknown coding is refused unread. */
export function decodedBody(operation: string, res: HttpResponse): Readable {
  const decoders = decodersFor(header(res.headers, 'content-encoding'));
  if (decoders === undefined) {
    discard(res.body);
    throw new VendorResponseError(operation, 'the answer uses an unsupported Content-Encoding');
  }
  return decodedStream(res.body, decoders);
}

/** Reads a (decoded) body whole as UTF-8 text, refusing more than `limit` bytes. */
export async function readText(
  operation: string,
  res: HttpResponse,
  limit: number,
  truncate = false,
): Promise<string> {
  const stream = decodedBody(operation, res);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      stream.destroy();
      if (truncate) break;
      throw new VendorResponseError(operation, `the answer is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Decoded bytes exempt from the decoding ratio: a few KiB of repeated text legitimately compress
 * 100:1 or more, and inflating them costs nothing (the same exemption as a report ZIP's entries).
 */
export const DECODING_RATIO_EXEMPT_BYTES = 1024 * 1024;

/** Error code of a body that went quiet for longer than its idle timeout. */
export const BODY_TIMEOUT = 'BODY_TIMEOUT';

/**
 * Wraps a download body so that every failure surfaces as a typed, credential-free error on the
 * stream: idle -> VendorTimeoutError('idle'), reset or premature close -> VendorNetworkError.
 * Backpressure is preserved: the generator pulls a chunk only when the consumer reads, and the idle
 * clock runs only while it waits for the vendor (never while the consumer is slow).
 * `maxBytes` counts the bytes handed on (decoded ones, so a compression bomb is counted as it
 * inflates) and cuts the body, socket included, at the first chunk that goes past it.
 */
export function guardBody(
  operation: string,
  body: Readable,
  decoders: Transform[],
  options: {
    idleTimeoutMs: number;
    expectedBytes: number | undefined;
    maxBytes?: number | undefined;
    maxDecodingRatio?: number | undefined;
  },
): Readable {
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const maxRatio = decoders.length === 0 ? undefined : options.maxDecodingRatio;
  // The bytes received, counted ahead of the decoders: they read ahead of what they hand on, so
  // the ratio seen is never above the true one.
  let encoded = 0;
  const counted =
    maxRatio === undefined
      ? decoders
      : [
          new Transform({
            transform(chunk: Buffer, _encoding, done) {
              encoded += chunk.length;
              done(null, chunk);
            },
          }),
          ...decoders,
        ];
  const source = decodedStream(body, counted);
  async function* relay(): AsyncGenerator<Buffer> {
    const chunks = (source as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    let bytes = 0;
    let finished = false;
    try {
      for (;;) {
        const next = await nextWithin(chunks, options.idleTimeoutMs, () => body.destroy());
        if (next.done) break;
        bytes += next.value.length;
        // Nothing past the cap is handed on: the consumer never holds more than maxBytes.
        if (bytes > maxBytes) throw new VendorBodyTooLargeError(operation, maxBytes);
        if (maxRatio !== undefined && bytes > DECODING_RATIO_EXEMPT_BYTES && bytes > maxRatio * encoded) {
          throw new VendorDecodingRatioError(operation, maxRatio, bytes, encoded);
        }
        yield next.value;
      }
      finished = true;
    } catch (err) {
      throw streamError(operation, err, options.idleTimeoutMs);
    } finally {
      // A consumer that stops early (or an error) must not leave the socket open.
      if (!finished) body.destroy();
    }
    // The parser checks Content-Length on a closed connection; this makes a short body an error on every path.
    if (options.expectedBytes !== undefined && bytes !== options.expectedBytes) {
      throw new VendorNetworkError({ operation, code: 'TRUNCATED_BODY', requestNotSent: false });
    }
  }
  return Readable.from(relay(), { objectMode: false });
}

/** The next chunk, or a BODY_TIMEOUT error (after `stop()` releases the socket) when none comes in time. */
async function nextWithin(
  chunks: AsyncIterator<Buffer>,
  idleTimeoutMs: number,
  stop: () => void,
): Promise<IteratorResult<Buffer>> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stop();
      reject(Object.assign(new Error(`no data for ${idleTimeoutMs} ms`), { code: BODY_TIMEOUT }));
    }, idleTimeoutMs);
  });
  try {
    return await Promise.race([chunks.next(), idle]);
  } finally {
    clearTimeout(timer);
  }
}

export function streamError(operation: string, err: unknown, idleTimeoutMs: number): Error {
  if (err instanceof VendorError) return err;
  const code = errorCode(err);
  if (code === BODY_TIMEOUT) {
    return new VendorTimeoutError({ operation, timeoutMs: idleTimeoutMs, phase: 'idle' });
  }
  if (code === 'Z_BUF_ERROR') {
    // zlib saw the compressed stream end early: the body was cut short.
    return new VendorNetworkError({ operation, code: 'TRUNCATED_BODY', requestNotSent: false });
  }
  if (code?.startsWith('Z_') || code === 'ERR_BROTLI_DECOMPRESSION_FAILED') {
    return new VendorResponseError(operation, `the body could not be decoded (${code})`);
  }
  return new VendorNetworkError({ operation, code, requestNotSent: false, cause: sanitizeCause(err, []) });
}

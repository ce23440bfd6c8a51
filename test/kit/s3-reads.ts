/**
 * What code under test read of the GetObject bodies an S3 client received: whether it read a byte
 * at all, and held memory sampled as it reads. A middleware on the client sees each body before
 * the caller does; nothing is wrapped or pre-read, so the caller gets the SDK's own stream.
 */
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';

let names = 0;

/** Calls `seen` with the body of every GetObject answer `client` receives from now on. */
function onGetObjectBody(client: S3Client, seen: (body: Readable) => void): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const body = (result.output as { Body?: unknown }).Body;
      if (context.commandName === 'GetObjectCommand' && body !== undefined) seen(body as Readable);
      return result;
    },
    { step: 'initialize', name: `onGetObjectBody-${++names}` },
  );
}

/** The body of every GetObject answer `client` receives from now on (a live list). */
export function keepGetObjectBodies(client: S3Client): Readable[] {
  const bodies: Readable[] = [];
  onGetObjectBody(client, (body) => bodies.push(body));
  return bodies;
}

/** Heap plus Buffer backing stores after a full collection (vitest runs with --expose-gc). */
export function heldBytes(): number {
  globalThis.gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/**
 * Samples `heldBytes()` each time the reader of a GetObject body from `client` has taken another
 * `everyBytes` of it (through `read()`, which async iteration, `pipe` and the SDK's collectors all
 * call), and returns the largest rise of held memory over the lowest figure seen before it: a
 * reader that keeps what it read rises by about what it read, one that streams stays flat.
 *
 * A rise rather than a distance from a figure taken first: a large upload just before may still be
 * referenced then and released while the body is read, which would hide a growth of the same size.
 */
export function heldRiseWhileReading(client: S3Client, everyBytes: number): () => number {
  let lowest = heldBytes();
  let rise = 0;
  const sample = () => {
    const held = heldBytes();
    rise = Math.max(rise, held - lowest);
    lowest = Math.min(lowest, held);
  };
  onGetObjectBody(client, (body) => {
    const read = body.read.bind(body);
    let bytes = 0;
    let next = everyBytes;
    body.read = (size?: number) => {
      const chunk: unknown = read(size);
      if (chunk !== null && chunk !== undefined) {
        bytes += (chunk as { length: number }).length;
        for (; bytes >= next; next += everyBytes) sample();
      }
      return chunk;
    };
  });
  return () => rise;
}

import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOutputName } from '#lambdas/scan/parse';
import { ScanClient } from '#lambdas/vendor-api/scan/scan-client';
import type { VendorSimulator } from '#local/simulator/types';
import { startSimulator } from '../../kit/simulator.ts';
import { testSettings } from './helpers.ts';

const FIFTY_MIB = 50 * 1024 * 1024;

let sim: VendorSimulator;
let client: ScanClient;
let uuid: string;

beforeAll(async () => {
  sim = await startSimulator({ reportBytes: FIFTY_MIB });
  client = new ScanClient(testSettings(sim, { requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 }));
  ({ uuid } = await client.startScan('big.example.com'));
  await client.getStatus(uuid);
});

afterAll(async () => {
  await client.close();
  await sim.close();
});

/**
 * Memory that a buffered body would show up in: JS heap plus Buffer backing stores, after a
 * collection (vitest runs with --expose-gc), so garbage awaiting the next scavenge is not counted.
 */
function heldBytes(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/**
 * Held memory is sampled every 16 MiB of body, three full collections per fetch (at 16, 32 and 48
 * MiB): each costs tens to hundreds of milliseconds of CPU in a worker whose heap other test files
 * have filled, and they were most of this file's time. A buffered body is held from the first
 * sample on, and a leak that keeps chunks holds 48 MiB, past the 32 MiB bound, by the last one.
 */
const SAMPLE_EVERY_BYTES = 16 * 1024 * 1024;

/** Consumes the report one chunk at a time, tracking the largest growth of held memory. */
async function streamReport(): Promise<{
  bytes: number;
  sha256: string;
  chunks: number;
  peakGrowth: number;
}> {
  // Before the request: a client that buffers the body before handing it over is counted too.
  const baseline = heldBytes();
  const download = await client.getOutput(parseOutputName('report'), uuid);
  const hash = createHash('sha256');
  let bytes = 0;
  let chunks = 0;
  let peakGrowth = 0;
  let nextSample = SAMPLE_EVERY_BYTES;
  for await (const chunk of download.body as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
    chunks += 1;
    if (bytes >= nextSample) {
      peakGrowth = Math.max(peakGrowth, heldBytes() - baseline);
      nextSample += SAMPLE_EVERY_BYTES;
    }
  }
  expect(bytes).toBe(download.contentLength);
  return { bytes, sha256: hash.digest('hex'), chunks, peakGrowth };
}

describe('large downloads', () => {
  it('streams a 50 MiB report chunk by chunk with bounded memory, identically on two fetches', async () => {
    // Act
    const first = await streamReport();
    const second = await streamReport();

    // Assess
    expect(first.bytes).toBeGreaterThanOrEqual(FIFTY_MIB * 0.95);
    expect(first.bytes).toBe(second.bytes);
    expect(first.sha256).toBe(second.sha256);
    // Many small chunks, not one buffered blob.
    expect(first.chunks).toBeGreaterThan(100);
    // Live memory after a collection: about 2 MiB measured alone, 23 MiB once in a worker shared with
    // other files (their unawaited work is live, not garbage). A buffered body holds >= 50 MiB.
    expect(Math.max(first.peakGrowth, second.peakGrowth)).toBeLessThan(32 * 1024 * 1024);
  });

  it('holds back the transfer while the consumer does not read (backpressure, no read-ahead)', async () => {
    // Prepare
    const download = await client.getOutput(parseOutputName('report'), uuid);
    const iterator = (download.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    await iterator.next();

    // Act: a consumer busy elsewhere (e.g. uploading a part to S3).
    await new Promise((resolve) => setTimeout(resolve, 200));

    // Assess: only a small window is buffered, not the rest of the 50 MiB.
    expect(download.body.readableLength).toBeLessThan(1024 * 1024);
    await iterator.return?.();
  });

  it('stops the transfer when the consumer destroys the stream early', async () => {
    // Prepare
    const download = await client.getOutput(parseOutputName('report'), uuid);
    let received = 0;

    // Act
    for await (const chunk of download.body as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > 1024 * 1024) break;
    }

    // Assess: breaking out destroys the body, and the client stays usable.
    expect(download.body.destroyed).toBe(true);
    expect(received).toBeLessThan(FIFTY_MIB);
    const status = await client.getStatus(uuid);
    expect(status.state).toBe('succeeded');
  });
});

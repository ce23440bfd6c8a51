/**
 * The download byte cap, at the transport: whatever the framing and the content-coding, the
 * consumer never receives more than `maxBytes` bytes, the body fails with VendorBodyTooLargeError
 * at the first byte past it, and the socket is released. The bodies are adversarial: a gzip bomb
 * (10 GiB of zeros, generated lazily by the simulator), a plain chunked body, a Content-Length
 * over the cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VendorBodyTooLargeError } from '#lambdas/platform/errors';
import { BreachClient } from '#lambdas/vendor-api/breach/breach-client';
import type { Fault, VendorSimulator } from '#local/simulator/types';
import { startSimulator } from '../../kit/simulator.ts';
import { testSettings } from './helpers.ts';

const REPORT = 'capped-report';
const CAP = 2 * 1024 * 1024;
/** Past this the test stops reading by itself: a download that got here was not capped. */
const TEST_STOP = 4 * CAP;

let sim: VendorSimulator;
let client: BreachClient;

beforeAll(async () => {
  sim = await startSimulator();
  sim.createReport(REPORT);
  client = new BreachClient(testSettings(sim, { requestTimeoutMs: 10_000, idleTimeoutMs: 10_000 }));
});

afterAll(async () => {
  await client.close();
  await sim.close();
});

/** Reads the download until it ends or fails, never past TEST_STOP. */
async function consume(maxBytes: number): Promise<{ received: number; error: unknown }> {
  let received = 0;
  try {
    const download = await client.download(REPORT, { maxBytes });
    for await (const chunk of download.body as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > TEST_STOP) {
        download.body.destroy();
        return { received, error: new Error(`read ${received} bytes past a cap of ${maxBytes}`) };
      }
    }
    return { received, error: undefined };
  } catch (error) {
    return { received, error };
  }
}

describe('BreachClient.download with maxBytes', () => {
  it.each<[string, Fault]>([
    [
      'a 10 GiB gzip bomb (chunked, Content-Encoding: gzip)',
      { type: 'oversized-body', bytes: 10 * 1024 ** 3 },
    ],
    ['a 1 GiB identity body (chunked)', { type: 'oversized-body', bytes: 1024 ** 3, encoding: 'identity' }],
  ])('stops %s within the cap', async (_label, fault) => {
    sim.addFault({ api: 'storage', path: '/reports/', fault });

    const { received, error } = await consume(CAP);

    expect(error).toBeInstanceOf(VendorBodyTooLargeError);
    expect((error as Error).message).toMatch(`larger than ${CAP} bytes`);
    expect(received).toBeLessThanOrEqual(CAP);
  });

  it('refuses a Content-Length over the cap before reading the body', async () => {
    const bytes = Buffer.alloc(CAP + 1, 7);
    sim.addFault({
      api: 'storage',
      path: '/reports/',
      fault: {
        type: 'status',
        status: 200,
        bodyBase64: bytes.toString('base64'),
        contentType: 'application/zip',
      },
    });

    const { received, error } = await consume(CAP);

    expect(error).toBeInstanceOf(VendorBodyTooLargeError);
    expect((error as Error).message).toMatch(`announced as ${CAP + 1} bytes`);
    expect(received).toBe(0);
  });

  it('hands over a body of exactly the cap in full', async () => {
    sim.addFault({
      api: 'storage',
      path: '/reports/',
      fault: { type: 'oversized-body', bytes: CAP },
    });

    const { received, error } = await consume(CAP);

    expect(error).toBeUndefined();
    expect(received).toBe(CAP);
  });
});

/**
 * The simulator's adversarial faults produce what they claim: a gzip body that inflates to the
 * asked size, ZIPs whose entries share one local header or inflate a thousandfold (read back with
 * yauzl, as the archive check reads them), and a recon answer with an oversized `output`.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yauzl from 'yauzl';
import { startVendorSimulator, type VendorSimulator } from '#local/simulator/index';
import type { Fault } from '#local/simulator/types';
import { rawRequest } from '../kit/http.ts';
import { apiKeyHeader } from '../kit/simulator.ts';

let sim: VendorSimulator;
let storageUrl: string;

beforeAll(async () => {
  sim = await startVendorSimulator({ pollsToFinish: 0 });
  sim.createReport('adversarial');
  const hop = await rawRequest(`${sim.url}/files/adversarial.zip`, { headers: apiKeyHeader(sim.apiKey) });
  storageUrl = String(hop.headers.location);
});
afterAll(async () => {
  await sim.close();
});

async function storageAnswer(fault: Fault) {
  sim.addFault({ api: 'storage', fault });
  return rawRequest(storageUrl);
}

async function entriesOf(zip: Buffer): Promise<yauzl.Entry[]> {
  const file = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(zip, { lazyEntries: false }, (error, opened) =>
      error ? reject(error) : resolve(opened),
    ),
  );
  const entries: yauzl.Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    file.on('entry', (entry: yauzl.Entry) => entries.push(entry));
    file.once('end', resolve);
    file.once('error', reject);
  });
  return entries;
}

describe('adversarial faults', () => {
  it('oversized-body: chunked gzip that inflates to exactly the asked bytes of zeros', async () => {
    const bytes = 3 * 1024 * 1024 + 5;
    const answer = await storageAnswer({ type: 'oversized-body', bytes });

    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe('gzip');
    expect(answer.headers['transfer-encoding']).toBe('chunked');
    expect(answer.headers['content-length']).toBeUndefined();
    expect(answer.body.length).toBeLessThan(bytes / 500);
    const inflated = gunzipSync(answer.body);
    expect(inflated.length).toBe(bytes);
    expect(inflated.every((byte) => byte === 0)).toBe(true);
  });

  it('zip-bomb: one deflated entry declaring its whole inflated size, about 1000:1', async () => {
    const answer = await storageAnswer({ type: 'zip-bomb', inflatedBytes: 64 * 1024 * 1024 });

    const [entry, ...rest] = await entriesOf(answer.body);
    expect(rest).toEqual([]);
    expect(entry?.uncompressedSize).toBe(64 * 1024 * 1024);
    expect((entry?.uncompressedSize ?? 0) / (entry?.compressedSize ?? 1)).toBeGreaterThan(900);
  });

  it('overlapping-zip: seven entries over one local header', async () => {
    const answer = await storageAnswer({ type: 'overlapping-zip' });

    const entries = await entriesOf(answer.body);
    expect(entries.map((entry) => entry.fileName)).toEqual(
      Array.from({ length: 7 }, (_, index) => `part-${index + 1}.bin`),
    );
    expect(new Set(entries.map((entry) => entry.relativeOffsetOfLocalHeader))).toEqual(new Set([0]));
    expect(
      entries.every((entry) => entry.compressionMethod === 0 && entry.uncompressedSize === 1024 * 1024),
    ).toBe(true);
  });

  it('oversized-output: the recon is processed and its output replaced', async () => {
    sim.addFault({ api: 'breach', path: '/recon', fault: { type: 'oversized-output', bytes: 300_000 } });

    const answer = await rawRequest(`${sim.url}/recon`, {
      method: 'POST',
      headers: { ...apiKeyHeader(sim.apiKey), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Jane Doe', emails: ['jane@example.com'] }),
    });

    const json = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
    expect(json).toMatchObject({ status: 'success', total_breaches: expect.any(Number) });
    expect(json.output).toHaveLength(300_000);
  });

  it.each([
    ['an oversized-body of 0 bytes', { type: 'oversized-body', bytes: 0 }],
    ['an oversized-body with an unknown encoding', { type: 'oversized-body', encoding: 'zstd' }],
    ['a zip-bomb past ZIP32', { type: 'zip-bomb', inflatedBytes: 2 ** 32 }],
    ['an overlapping-zip with unknown data', { type: 'overlapping-zip', data: 'bzip2' }],
    ['an oversized-output of 1.5 bytes', { type: 'oversized-output', bytes: 1.5 }],
  ])('rejects %s', (_label, fault) => {
    expect(() => sim.addFault({ fault } as never)).toThrow(TypeError);
  });
});

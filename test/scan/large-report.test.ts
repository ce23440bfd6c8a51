/**
 * Big outputs: streamed through the Lambda with bounded memory, and a failure after the multipart
 * upload started still leaves nothing behind.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ScanApi } from '#lambdas/scan/deps';
import { fetchScanOutput } from '#lambdas/scan/fetch-scan-output';
import { startScan } from '#lambdas/scan/start-scan';
import type { VendorSimulator } from '#local/simulator/types';
import { recordS3Commands, type S3rverFixture, startS3rver } from '../../local/services/s3/embedded-s3.ts';
import { listKeys } from '../kit/s3.ts';
import { startSimulator } from '../kit/simulator.ts';
import {
  closeTestClients,
  createTestDeps,
  pollUntilDone,
  RESULTS_BUCKET,
  s3ObjectDigest,
  vendorOutputDigest,
} from './fixture.ts';

const MiB = 1024 * 1024;
const REPORT_BYTES = 32 * MiB;
const PART_BYTES = 5 * MiB;

let s3: S3rverFixture;
let sim: VendorSimulator;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [RESULTS_BUCKET] });
  sim = await startSimulator({ pollsToFinish: 0, reportBytes: REPORT_BYTES });
});

afterEach(async () => {
  sim.clearFaults();
  await closeTestClients();
});

afterAll(async () => {
  await sim.close();
  await s3.close();
});

/**
 * How far the step's reading of a report runs ahead of its upload: each time it sends S3 a part
 * (or a whole object), the bytes it has pulled from the report's body minus the bytes it handed
 * to S3 before this command, so what it holds for the parts it is sending and cutting. Counted in
 * bytes rather than process memory, which here also holds the in-process s3rver and simulator
 * (30-40 MiB swings measured while a report streams). A vendor client that buffered the body
 * before handing it over would not show here: test/vendor-api/transport/large-download.test.ts.
 */
function measureReadAhead(
  scanClient: ScanApi,
  s3: S3Client,
): { scanClient: ScanApi; aheadAtEachUpload: number[] } {
  let pulled = 0;
  let uploaded = 0;
  const aheadAtEachUpload: number[] = [];
  s3.middlewareStack.add(
    (next, context) => (args) => {
      const body = (args.input as { Body?: unknown }).Body;
      if (context.commandName === 'UploadPartCommand' || context.commandName === 'PutObjectCommand') {
        aheadAtEachUpload.push(pulled - uploaded);
        uploaded += body instanceof Uint8Array || typeof body === 'string' ? body.length : 0;
      }
      return next(args);
    },
    { step: 'initialize', name: 'measureReadAhead' },
  );
  const getOutput: ScanApi['getOutput'] = async (output, scanUuid, options) => {
    const download = await scanClient.getOutput(output, scanUuid, options);
    // Counts what the step takes: a Readable emits 'data' for every chunk it hands over, whether
    // read() (async iteration) or flowing mode (pipe) takes it. Nothing is wrapped or pre-read.
    const emit = download.body.emit.bind(download.body);
    download.body.emit = (event: string | symbol, ...args: unknown[]) => {
      if (event === 'data' && args[0] instanceof Uint8Array) pulled += args[0].length;
      return emit(event, ...args);
    };
    return download;
  };
  const counted = new Proxy(scanClient, {
    get: (target, property) => {
      if (property === 'getOutput') return getOutput;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { scanClient: counted, aheadAtEachUpload };
}

describe('large outputs', () => {
  it('streams a 32 MiB report into S3 byte-identical, holding less than three 5 MiB parts of it at a time', async () => {
    // Prepare
    const client = s3.createClient();
    const bed = createTestDeps(client, sim, { upload: { partSizeBytes: PART_BYTES, queueSize: 2 } });
    const { scanClient, aheadAtEachUpload } = measureReadAhead(bed.deps.scanClient, client);
    const started = await startScan(bed.deps, { domain: 'big.example.com' });
    const finished = await pollUntilDone(bed, started);

    // Act
    const stored = await fetchScanOutput({ ...bed.deps, scanClient }, { ...finished, output: 'report' });

    // Assess
    const vendor = await vendorOutputDigest(sim, 'report', started.scanUuid);
    const inS3 = await s3ObjectDigest(s3.client, stored.key);
    expect(vendor.size).toBeGreaterThanOrEqual(REPORT_BYTES * 0.95);
    expect(stored).toMatchObject({ size: vendor.size, sha256: vendor.sha256 });
    expect(inS3).toMatchObject({ size: vendor.size, sha256: vendor.sha256, contentType: 'application/json' });
    expect(inS3.metadata.sha256).toBe(vendor.sha256);
    // In 5 MiB parts as they are read, two sent at a time while the next is cut: about 10 MiB
    // held (measured). A step that reads the whole report before storing it holds all 32 MiB.
    console.info(
      `FetchScanOutput of ${vendor.size} bytes in ${aheadAtEachUpload.length} parts: at most ${(Math.max(...aheadAtEachUpload) / MiB).toFixed(2)} MiB read and not yet handed to S3`,
    );
    expect(aheadAtEachUpload.length).toBeGreaterThanOrEqual(Math.floor(REPORT_BYTES / PART_BYTES));
    expect(Math.max(...aheadAtEachUpload)).toBeLessThan(3 * PART_BYTES);
  });

  it('aborts the multipart upload and stores nothing when the vendor resets the connection after several parts', async () => {
    // Prepare
    const client = s3.createClient();
    const commands = recordS3Commands(client);
    const bed = createTestDeps(client, sim, { upload: { partSizeBytes: PART_BYTES, queueSize: 2 } });
    const started = await startScan(bed.deps, { domain: 'big-reset.example.com' });
    const finished = await pollUntilDone(bed, started);
    sim.addFault({ api: 'scan', path: '/report/', fault: { type: 'reset-mid-body', afterBytes: 17 * MiB } });

    // Act
    const attempt = fetchScanOutput(bed.deps, { ...finished, output: 'report' });

    // Assess
    await expect(attempt).rejects.toMatchObject({ name: 'VendorNetworkError' });
    expect(commands).toContain('UploadPartCommand');
    expect(commands).toContain('AbortMultipartUploadCommand');
    expect(commands).not.toContain('CompleteMultipartUploadCommand');
    expect(await listKeys(s3.client, RESULTS_BUCKET, started.outputPrefix)).toEqual([]);
  });
});
